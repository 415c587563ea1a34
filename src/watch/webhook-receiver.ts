/**
 * [6], [D3] The webhook receiver: `POST` deliveries at the registered path, `GET
 * /healthz` for supervisors, and `GET /metrics` for Prometheus when given. A delivery is verified against its raw bytes, then
 * kept in the store, and only then answered 200: the service never retries, so
 * a delivery answered 200 must survive a crash a moment later. Every refusal
 * (401, 400, 413, 408) happens before anything is stored, and changes nothing.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Credentials } from '../api/signing.js';
import type { Clock } from '../clock.js';
import type { WebhookStore } from '../store/port.js';
import { parseDelivery, sameKey, signatureProblem } from './webhook-delivery.js';
import { RefusalLog } from './refusal-log.js';
import { BodyTooLarge } from '../http-body.js';

export interface ReceiverOptions {
  host: string;
  port: number;
  /** The public URL registered with the service; set once listening when it depends on the port. */
  publicUrl: (port: number) => string;
  credentials: Credentials;
  store: WebhookStore;
  clock: Clock;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  maxDeliveriesInFlight: number;
  maxConnections: number;
  log: (event: string, fields: Record<string, unknown>) => void;
  /** Called after a delivery was stored: apply it. */
  onStored: () => void;
  /** What is wrong with the database, if anything: nothing is stored then, and /healthz says so. */
  unhealthy?: () => string | null;
  /** Several workers: what this one holds (its lease's claims), shown by /healthz. */
  held?: () => Promise<Record<string, unknown>>;
  /** Served at GET /metrics, and told of every delivery accepted or refused (see console/metrics.ts). */
  metrics?: ReceiverMetrics;
}

/** Why a delivery was refused, as a metric's label: a few fixed words, never the request's content. */
export type RefusalKind = 'unsigned' | 'unknown_key' | 'too_large' | 'busy' | 'too_slow' | 'bad_signature' | 'malformed' | 'not_a_delivery' | 'replay' | 'stopping' | 'database';

export interface ReceiverMetrics {
  readonly contentType: string;
  scrape(): Promise<string>;
  webhookDelivery(outcome: 'accepted' | 'refused', reason: RefusalKind | 'stored'): void;
}

class BodyTooSlow extends Error {}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function answer(response: ServerResponse, status: number, body: Record<string, unknown>, close = false): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json', ...(close ? { connection: 'close' } : {}) });
  response.end(`${JSON.stringify(body)}\n`);
}

/** The body, up to `limit` bytes within `timeoutMs`; more, or slower, is refused at once. */
function readBody(request: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      request.pause();
      reject(new BodyTooSlow());
    }, timeoutMs);
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        clearTimeout(timer);
        request.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    request.on('error', reject);
    request.on('aborted', () => reject(new Error('the sender went away')));
  });
}

export class WebhookReceiver {
  private server: Server | null = null;
  private accepting = true;
  private inFlight = 0;
  private url = '';
  private path = '/webhooks';
  private readonly refusals: RefusalLog;

  constructor(private readonly options: ReceiverOptions) {
    this.refusals = new RefusalLog(options.log, () => options.clock.now());
  }

  /** The URL deliveries are signed over and registered at. */
  get publicUrl(): string {
    return this.url;
  }

  async listen(): Promise<void> {
    // Node checks its own request timeout only every `connectionsCheckingInterval`; the body timer below is exact.
    const server = createServer({ connectionsCheckingInterval: 1_000 }, (request, response) => {
      void this.handle(request, response).catch((error: unknown) => {
        this.options.log('webhook_receiver_error', { reason: (error as Error).message });
        answer(response, 500, { error: 'internal error' });
      });
    });
    // A slow-drip sender is cut off instead of holding a connection open for ever.
    server.requestTimeout = this.options.bodyTimeoutMs;
    server.headersTimeout = Math.min(this.options.bodyTimeoutMs, 5_000);
    server.keepAliveTimeout = 5_000;
    server.maxConnections = this.options.maxConnections;
    server.maxHeadersCount = 50;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.server = server;
    this.url = this.options.publicUrl((server.address() as AddressInfo).port);
    this.path = new URL(this.url).pathname;
  }

  /** Stops taking deliveries (they answer 503 meanwhile) and closes once the ones in progress are stored. */
  async close(): Promise<void> {
    this.accepting = false;
    this.refusals.summarise(true);
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const until = Date.now() + 2_000;
    while (this.inFlight > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    server.closeAllConnections();
    await closed;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    const sick = this.options.unhealthy?.() ?? null;
    if (request.method === 'GET' && path === '/healthz' && sick) return answer(response, 503, { status: 'database', reason: sick });
    if (request.method === 'GET' && path === '/metrics' && this.options.metrics) return this.serveMetrics(this.options.metrics, response);
    if (request.method === 'GET' && path === '/healthz') {
      let figures: Record<string, unknown>;
      try {
        const counts = await this.options.store.webhookEventCounts();
        figures = { webhook_events: counts.received, pending: counts.pending, ...(this.options.held ? { worker: await this.options.held() } : {}) };
      } catch (error) {
        // The database does not answer (a server down, a network cut): deliveries cannot be kept, so say so.
        answer(response, 503, { status: 'database', reason: `the database does not answer: ${(error as Error).message}` });
        return;
      }
      answer(response, this.accepting ? 200 : 503, { status: this.accepting ? 'ok' : 'stopping', ...figures });
      return;
    }
    if (path !== this.path) return answer(response, 404, { error: 'not found' });
    if (request.method !== 'POST') return answer(response, 405, { error: 'only POST is accepted here' });
    if (!this.accepting) {
      this.options.metrics?.webhookDelivery('refused', 'stopping');
      return answer(response, 503, { error: 'shutting down' }, true);
    }
    if (sick) {
      this.options.metrics?.webhookDelivery('refused', 'database');
      return answer(response, 503, { error: 'not taking deliveries: its database needs a person' }, true);
    }
    // Before a byte of the body is read: the headers must be there, the key the service's, the size within bounds.
    const early = this.refuseEarly(request);
    if (early) {
      this.refused(early.status, early.reason, early.kind);
      return answer(response, early.status, { error: early.error }, true);
    }
    this.inFlight += 1;
    try {
      await this.receive(request, response);
    } finally {
      this.inFlight -= 1;
    }
  }

  /** The registry's text; 503 when the store does not answer (the figures come from it). */
  private async serveMetrics(metrics: ReceiverMetrics, response: ServerResponse): Promise<void> {
    let text: string;
    try {
      text = await metrics.scrape();
    } catch (error) {
      return answer(response, 503, { status: 'database', reason: `the database does not answer: ${(error as Error).message}` });
    }
    response.writeHead(200, { 'content-type': metrics.contentType });
    response.end(text);
  }

  /** A refusal, logged at a bounded rate and counted. */
  private refused(status: number, reason: string, kind: RefusalKind): void {
    this.refusals.refused(status, reason);
    this.options.metrics?.webhookDelivery('refused', kind);
  }

  /** What can be refused from the headers alone, so that a client that is not the service costs no body buffer. */
  private refuseEarly(request: IncomingMessage): { status: number; reason: string; error: string; kind: RefusalKind } | null {
    const { maxBodyBytes, credentials } = this.options;
    const key = header(request, 'authorization-key');
    if (!key || !header(request, 'authorization-nonce') || !header(request, 'authorization-signature')) {
      return { status: 401, reason: 'an authentication header is missing', error: 'not signed by the service', kind: 'unsigned' };
    }
    if (!sameKey(key, credentials.apiKey)) return { status: 401, reason: 'unknown key', error: 'not signed by the service', kind: 'unknown_key' };
    const declared = Number(header(request, 'content-length') ?? '0');
    if (declared > maxBodyBytes) return { status: 413, reason: `declared over ${maxBodyBytes} bytes`, error: 'body too large', kind: 'too_large' };
    if (this.inFlight >= this.options.maxDeliveriesInFlight) return { status: 503, reason: `over ${this.options.maxDeliveriesInFlight} deliveries in progress`, error: 'busy, try again', kind: 'busy' };
    return null;
  }

  private async receive(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { maxBodyBytes } = this.options;
    const log = (kind: RefusalKind, fields: { status: number; reason: string; event_type?: string }): void => this.refused(fields.status, fields.reason, kind);
    let raw: Buffer;
    try {
      raw = await readBody(request, maxBodyBytes, this.options.bodyTimeoutMs);
    } catch (error) {
      if (error instanceof BodyTooSlow) {
        log('too_slow', { status: 408, reason: `the body took longer than ${this.options.bodyTimeoutMs} ms` });
        return answer(response, 408, { error: 'body too slow' }, true);
      }
      if (!(error instanceof BodyTooLarge)) throw error;
      log('too_large', { status: 413, reason: `over ${maxBodyBytes} bytes` });
      return answer(response, 413, { error: 'body too large' }, true);
    }
    const headers = { key: header(request, 'authorization-key'), nonce: header(request, 'authorization-nonce'), signature: header(request, 'authorization-signature') };
    const problem = signatureProblem(headers, raw, this.url, this.options.credentials);
    if (problem) {
      log('bad_signature', { status: 401, reason: problem });
      return answer(response, 401, { error: 'not signed by the service' });
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      log('malformed', { status: 400, reason: 'malformed JSON' });
      return answer(response, 400, { error: 'malformed JSON' });
    }
    const delivery = parseDelivery(body);
    if (typeof delivery === 'string') {
      log('not_a_delivery', { status: 400, reason: delivery });
      return answer(response, 400, { error: delivery });
    }
    const stored = await this.options.store.recordWebhookEvent({
      received_at: new Date(this.options.clock.now()).toISOString(),
      nonce: headers.nonce as string,
      webhook_id: delivery.webhookId,
      event_type: delivery.eventType,
      object_id: delivery.objectId,
      body: raw.toString('utf8'),
    });
    if (stored === 'replayed') {
      log('replay', { status: 401, reason: 'nonce already accepted (a replay)', event_type: delivery.eventType });
      return answer(response, 401, { error: 'nonce already used' });
    }
    answer(response, 200, { received: stored });
    this.options.metrics?.webhookDelivery('accepted', 'stored');
    this.options.onStored();
  }
}
