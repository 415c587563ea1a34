/**
 * The payout service client. Signs every request [D2], puts a timeout on every
 * call, never follows a redirect, refuses oversized answers, and classifies
 * every answer (see errors.ts). Reads are retried with backoff; a write is
 * retried only when it certainly did nothing (429); an unknown outcome goes back
 * to the caller, who resolves it before doing anything else [D7].
 */
import { isUtf8 } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { pauseUnlessStopped } from './when-stopped.js';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { PayoutRequest } from './payout-request.js';
import type { ServiceErrorItem } from './errors.js';
import { AuthenticationRefused, OutcomeUnknown, Rejected, Retryable } from './errors.js';
import type { ServiceTransaction } from './answers.js';
import { errorItems, parseList, parseTransaction, unwrap } from './answers.js';
import type { BackoffPolicy } from './backoff.js';
import { backoffDelay } from './backoff.js';
import type { Credentials } from './signing.js';
import { authHeaders } from './signing.js';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { CallObserver, Endpoint } from './calls.js';
import { callOutcome } from './calls.js';
import { rateEndpoint } from './rate-bucket.js';
import type { RateLimiter } from './rate-limiter.js';
import { RateWaitStopped } from './rate-limiter.js';
import type { Exchanged } from './exchange.js';
import { exchange } from './exchange.js';

export interface ClientOptions {
  /** Includes any version prefix, e.g. https://payouts.example/v1 [D1]. */
  baseUrl: string;
  credentials: Credentials;
  timeoutMs: number;
  retry: BackoffPolicy;
  /** Larger answers are refused: a hostile or broken service cannot exhaust memory. */
  maxAnswerBytes: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Connections to the service (16 at least): as many as calls may be in flight. */
  connections?: number;
  /** Deadlines given to calls are read on this clock. */
  clock?: Clock;
  /** Told when the service asks for an absurd wait (a capped Retry-After). */
  log?: (event: string, fields: Record<string, unknown>) => void;
  /** Told of every HTTP request made, retries included (for /metrics). */
  onCall?: CallObserver;
  /** service.rate_limits: waited on before every request, retries included (rate-limiter.ts); absent: no rate is limited. */
  rateLimiter?: RateLimiter;
}

/**
 * What bounds one call's retries: it never waits past `until` (ms on the client's
 * clock: a run's --wait, a funding deadline) nor past `signal` (a shutdown). A
 * wait that would outlast either ends the call with its last error instead.
 */
export interface CallLimits {
  until?: number;
  signal?: AbortSignal;
}

interface Answer {
  status: number;
  body: unknown;
  readable: boolean;
  retryAfterMs: number | undefined;
  location: string | undefined;
}

export interface CorridorRecord {
  id: string;
  type: string;
  country_code: string;
  input_currency_codes: string[];
  output_currency_codes: string[];
  active: boolean;
}

export interface WebhookRecord {
  id: string;
  event_type: string;
  uri: string;
}

type Kind = 'read' | 'write';

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A Retry-After header (seconds, or an HTTP date) in ms, uncapped; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * [D2] The one spelling of a URL that is both signed and sent: undici sends the
 * WHATWG-normalised form (a quote in a query becomes %27), so that is what is
 * signed. Path and query parts are percent-encoded strictly beforehand, so that
 * normalising changes nothing a person would recognise.
 * Returned with the origin and path undici is given for it.
 */
function requestTarget(base: string, path: string): { url: string; origin: string; path: string } {
  const url = new URL(`${base}${path}`);
  return { url: url.href, origin: url.origin, path: `${url.pathname}${url.search}` };
}

/** encodeURIComponent, and also ! ' ( ) *, which it leaves alone and some servers treat as delimiters. */
export function encodePart(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Connections to the service at least, whatever the engine's concurrency: calls outside the engine's limit (listing corridors, registering webhooks) keep room beside it. */
const MIN_CONNECTIONS = 16;

export class PayoutClient {
  private readonly dispatcher: Dispatcher;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly base: string;
  private readonly clock: Clock;
  private readonly observers: CallObserver[] = [];

  /** Where the service is, for messages (never the credentials). */
  get baseUrl(): string {
    return this.base;
  }

  /**
   * A key for paybatch's own MACs (the seal of a batch's release, see approvals/release-seal.ts), derived from the API
   * secret for one `purpose`: the secret never leaves the client, and is kept outside the database.
   */
  derivedKey(purpose: string): Buffer {
    return createHmac('sha256', this.options.credentials.apiSecret).update(`paybatch ${purpose}`).digest();
  }

  constructor(private readonly options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.dispatcher = new Agent({ connections: Math.max(options.connections ?? 0, MIN_CONNECTIONS), keepAliveTimeout: 10_000 });
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.clock = options.clock ?? systemClock;
    if (options.onCall) this.observers.push(options.onCall);
  }

  /** Tells `observer` of every request from now on (the daemon's /metrics); returns how to stop. */
  observeCalls(observer: CallObserver): () => void {
    this.observers.push(observer);
    return () => {
      const at = this.observers.indexOf(observer);
      if (at >= 0) this.observers.splice(at, 1);
    };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  // ---- the endpoints of [4] and [D7]

  async listCorridors(country: string, limits: CallLimits = {}): Promise<CorridorRecord[]> {
    const list = parseList(await this.call('read', 'GET /corridors/:country', `/corridors/${encodePart(country)}`, undefined, `corridors of ${country}`, limits));
    if (!list) throw new Retryable(`the corridors of ${country} came back in an unexpected shape`, undefined);
    return list as CorridorRecord[];
  }

  async createTransaction(body: PayoutRequest, limits: CallLimits = {}): Promise<ServiceTransaction> {
    return this.transaction(await this.call('write', 'POST /transactions', '/transactions', body, `creating ${body.external_id}`, limits), 'write', `creating ${body.external_id}`);
  }

  async findTransactions(externalId: string, limits: CallLimits = {}): Promise<ServiceTransaction[]> {
    const what = `looking up ${externalId}`;
    const list = parseList(await this.call('read', 'GET /transactions', `/transactions?external_id=${encodePart(externalId)}`, undefined, what, limits));
    const parsed = list?.map(parseTransaction);
    if (!parsed || parsed.some((t) => t === null)) throw new Retryable(`${what}: the answer is not a list of transactions`, undefined);
    return parsed as ServiceTransaction[];
  }

  async getTransaction(id: string, limits: CallLimits = {}): Promise<ServiceTransaction> {
    return this.transaction(await this.call('read', 'GET /transactions/:id', `/transactions/${encodePart(id)}`, undefined, `reading ${id}`, limits), 'read', `reading ${id}`);
  }

  /** [D10] With the amount guard: the service refuses if the amount is not the one we checked. */
  async fundTransaction(id: string, guard: { input_amount_in_cents: string; input_currency: string }, limits: CallLimits = {}): Promise<ServiceTransaction> {
    return this.transaction(await this.call('write', 'POST /transactions/:id/fund', `/transactions/${encodePart(id)}/fund`, guard, `funding ${id}`, limits), 'write', `funding ${id}`);
  }

  /** [D11] Accepted, then carried out asynchronously. */
  async cancelTransaction(id: string, limits: CallLimits = {}): Promise<ServiceTransaction> {
    return this.transaction(await this.call('write', 'DELETE /transactions/:id', `/transactions/${encodePart(id)}`, undefined, `cancelling ${id}`, limits), 'write', `cancelling ${id}`);
  }

  async registerWebhook(eventType: string, uri: string): Promise<WebhookRecord> {
    return (await this.call('write', 'POST /webhooks', '/webhooks', { event_type: eventType, uri }, `registering ${eventType}`)) as WebhookRecord;
  }

  async listWebhooks(): Promise<WebhookRecord[]> {
    const list = parseList(await this.call('read', 'GET /webhooks', '/webhooks', undefined, 'listing webhooks'));
    if (!list) throw new Retryable('the webhooks came back in an unexpected shape', undefined);
    // [2.6] The id's member name is not shown: `id`, or `webhook_id` as the live service may spell it.
    return list.flatMap((item) => {
      const w = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
      const id = w.id ?? w.webhook_id;
      return typeof id === 'string' && typeof w.event_type === 'string' && typeof w.uri === 'string' ? [{ id, event_type: w.event_type, uri: w.uri }] : [];
    });
  }

  async deleteWebhook(id: string): Promise<void> {
    await this.call('write', 'DELETE /webhooks/:id', `/webhooks/${encodePart(id)}`, undefined, `removing webhook ${id}`);
  }

  // ---- the machinery

  private transaction(object: unknown, kind: Kind, what: string): ServiceTransaction {
    const tx = parseTransaction(object);
    if (tx) return tx;
    const message = `${what}: the answer is not a transaction`;
    throw kind === 'write' ? new OutcomeUnknown(message) : new Retryable(message, undefined);
  }

  /** One call, retried per its kind, never waiting past its limits; returns the unwrapped object of a 2xx answer. */
  private async call(kind: Kind, endpoint: Endpoint, path: string, body: unknown, what: string, limits: CallLimits = {}): Promise<unknown> {
    const method = endpoint.slice(0, endpoint.indexOf(' '));
    for (let attempt = 1; ; attempt++) {
      try {
        // Only when limited: an await here would put the request itself off by a turn of the event loop.
        if (this.options.rateLimiter) await this.awaitRate(this.options.rateLimiter, endpoint, what, limits.signal);
        return this.classify(kind, await this.timed(endpoint, () => this.send(kind, method, path, body, what, limits.signal)), what);
      } catch (error) {
        if (!(error instanceof Retryable) || attempt >= this.options.retry.attempts) throw error;
        const wait = this.waitBefore(error, attempt, what);
        if (limits.signal?.aborted || (limits.until !== undefined && this.clock.now() + wait > limits.until)) throw error;
        await this.pause(wait, limits.signal);
        if (limits.signal?.aborted) throw error;
      }
    }
  }

  /** The configured request rate's turn for one request; a stop while waiting is a call that did nothing (Retryable). */
  private async awaitRate(limiter: RateLimiter, endpoint: Endpoint, what: string, signal: AbortSignal | undefined): Promise<void> {
    try {
      await limiter.take(rateEndpoint(endpoint), signal);
    } catch (error) {
      if (error instanceof RateWaitStopped) throw new Retryable(`${what}: ${error.message}; not sent`, undefined);
      throw error;
    }
  }

  /** One request, its outcome and duration told to the observers; an observer that throws changes nothing. */
  private async timed(endpoint: Endpoint, send: () => Promise<Answer>): Promise<Answer> {
    const started = performance.now();
    let answer: Answer | null = null;
    try {
      answer = await send();
      return answer;
    } finally {
      const outcome = callOutcome(answer);
      const seconds = (performance.now() - started) / 1000;
      for (const observer of this.observers) {
        try {
          observer(endpoint, outcome, seconds);
        } catch {
          // Metrics never stop a payout.
        }
      }
    }
  }

  /** Retry-After when the service gave one, capped at the backoff's cap (an absurd one is said); else backoff with jitter. */
  private waitBefore(error: Retryable, attempt: number, what: string): number {
    if (error.retryAfterMs === undefined) return backoffDelay(this.options.retry, attempt, this.random);
    if (error.retryAfterMs <= this.options.retry.capMs) return error.retryAfterMs;
    this.options.log?.('retry_after_capped', { call: what, asked_s: Math.round(error.retryAfterMs / 1000), waited_s: Math.round(this.options.retry.capMs / 1000) });
    return this.options.retry.capMs;
  }

  /** Sleeps, ending early (its timer cleared) when the signal fires. */
  private async pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (!signal || this.options.sleep) return this.sleep(ms);
    await pauseUnlessStopped(ms, signal);
  }

  private classify(kind: Kind, answer: Answer, what: string): unknown {
    const { status } = answer;
    const unknown = (why: string): Error => (kind === 'write' ? new OutcomeUnknown(`${what}: ${why}`) : new Retryable(`${what}: ${why}`, undefined));
    if (status >= 200 && status < 300) {
      if (!answer.readable) throw unknown(`the ${status} answer could not be read`);
      return unwrap(answer.body).object;
    }
    const items: ServiceErrorItem[] = answer.readable ? errorItems(answer.body) : [];
    if (status === 401 || status === 403) throw new AuthenticationRefused(status, items.map((i) => i.message).join('; ') || 'no reason given');
    if (status === 429) throw new Retryable(`${what}: rate limited`, answer.retryAfterMs);
    if (status >= 300 && status < 400) {
      // Never followed: a redirect would carry our signature to wherever it points.
      if (kind === 'write') throw new OutcomeUnknown(`${what}: unexpected redirect (${status}) to ${answer.location ?? 'nowhere'}, not followed`);
      throw new Rejected(status, [{ field: 'base', message: `unexpected redirect to ${answer.location ?? 'nowhere'}, not followed` }], undefined, what);
    }
    if (status >= 400 && status < 500) {
      // A write refused in words that could not be read (cut off, too long, garbled): which refusal it was is lost, and
      // with it what to do next (a duplicate external_id [D6] means the transaction exists). Found out as for no answer:
      // the create looks its external_id up [D7], the funding reads its transaction [D10].
      if (kind === 'write' && !answer.readable) throw unknown(`the ${status} refusal could not be read`);
      throw new Rejected(status, items, answer.readable ? unwrap(answer.body).meta : undefined, what);
    }
    throw unknown(`the service answered ${status}`);
  }

  /** One request. A read ends at once on a stop; a write runs to its timeout, since cutting it off would leave its outcome unknown. */
  private async send(kind: Kind, method: string, path: string, body: unknown, what: string, stop?: AbortSignal): Promise<Answer> {
    const target = requestTarget(this.base, path);
    const text = body === undefined ? '' : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json', ...authHeaders(this.options.credentials, method, target.url, text) };
    if (text) headers['content-type'] = 'application/json';
    let answer: Exchanged;
    try {
      // The agent itself, given the URL already parsed (see exchange.ts).
      answer = await exchange(this.dispatcher, { origin: target.origin, path: target.path, method: method as Dispatcher.HttpMethod, headers, body: text || undefined }, {
        timeoutMs: this.options.timeoutMs, maxAnswerBytes: this.options.maxAnswerBytes, stop: kind === 'read' ? stop : undefined,
      });
    } catch (error) {
      // No answer (timeout, reset, refused): for a write, it may have taken effect all the same.
      const message = `${what}: no answer (${(error as Error).message})`;
      throw kind === 'write' ? new OutcomeUnknown(message, { cause: error }) : new Retryable(message, undefined, { cause: error });
    }
    let parsed: unknown;
    // JSON is UTF-8: bytes that are not are a garbled answer, not text to decode into U+FFFD and act upon.
    let readable = answer.complete && isUtf8(answer.bytes);
    if (readable && answer.bytes.length > 0) {
      try {
        parsed = JSON.parse(answer.bytes.toString('utf8'));
      } catch {
        readable = false;
      }
    }
    const { location } = answer.headers;
    return { status: answer.status, body: parsed, readable, retryAfterMs: retryAfterMs(answer.headers['retry-after'], Date.now()), location: Array.isArray(location) ? location[0] : location };
  }
}
