/**
 * The sandbox over HTTP. Each API request goes through, in order: routing (404,
 * 405), the body size limit (413), injected faults (latency, 429/500/503),
 * authentication [D2] (401), JSON parsing (400), the operation, and last the
 * "reset after commit" fault, which drops the connection after the change
 * took effect: the case that causes double payments in the field.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiHandler } from './api-routes.js';
import type { CallWindows } from './call-windows.js';
import { countedEndpoint } from './call-windows.js';
import type { SandboxConfig } from './config.js';
import { drawFault, drawResetAfterCommit } from './faults.js';
import type { FaultSettings } from './operator-routes.js';
import type { Random } from './random.js';
import type { Reply } from './reply.js';
import { failure } from './reply.js';
import type { Router } from './router.js';
import { signatureFor, signaturesMatch } from './signature.js';
import type { SandboxStore } from './store.js';
import { BodyTooLarge } from '../http-body.js';

export interface HttpDeps {
  config: SandboxConfig;
  store: SandboxStore;
  api: Router<ApiHandler>;
  operator: Router<ApiHandler>;
  faults: FaultSettings;
  /** Calls to the interface per one-second window (call-windows.ts). */
  calls: CallWindows;
  random: Random;
  log: (line: string) => void;
  /** How an injected latency is waited out: a timer of that length, unless a test holds it (SandboxOptions.latency). */
  latency?: (ms: number) => Promise<unknown>;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(new BodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

/** [D4] Bare objects by default; the live service's `{object, meta}` wrapping in live style. */
function shape(result: Reply, liveStyle: boolean): unknown {
  if (result.body === undefined) return undefined;
  if (liveStyle && (result.status < 300 || result.status === 422)) return { object: result.body, meta: result.meta ?? {} };
  return result.meta ? { ...(result.body as object), meta: result.meta } : result.body;
}

/** [D2] Returns the reason for refusing, or null when the request is properly signed with a fresh nonce. */
function authenticate(req: IncomingMessage, body: Buffer, config: SandboxConfig, store: SandboxStore): string | null {
  const key = req.headers['authorization-key'];
  const nonce = req.headers['authorization-nonce'];
  const signature = req.headers['authorization-signature'];
  if (typeof key !== 'string' || typeof nonce !== 'string' || typeof signature !== 'string' || !key || !nonce || !signature) {
    return 'the Authorization-Key, Authorization-Nonce and Authorization-Signature headers are required';
  }
  if (!signaturesMatch(config.api_key, key)) return 'unknown API key';
  const url = `http://${req.headers.host ?? ''}${req.url ?? ''}`;
  if (!signaturesMatch(signatureFor(config.api_secret, nonce, req.method ?? '', url, body), signature)) {
    return 'the signature does not match the request';
  }
  if (!store.useNonce(nonce)) return 'the nonce was already used';
  return null;
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  if (body.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

export function createSandboxServer(deps: HttpDeps): Server {
  const { config } = deps;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    /** Set when an API request's latency starts (below); every answer waits for it. */
    let latency: Promise<unknown> | null = null;
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const isOperator = url.pathname.startsWith('/_sandbox/');
    const inApi = url.pathname === config.base_path || url.pathname.startsWith(`${config.base_path}/`);
    if (!isOperator && !inApi) return sendReply(failure(404, `no such path: ${url.pathname}`));
    const path = isOperator ? url.pathname : url.pathname.slice(config.base_path.length) || '/';
    const match = (isOperator ? deps.operator : deps.api).match(method, path);
    if (match.kind === 'no-path') return sendReply(failure(404, `no such path: ${url.pathname}`));
    if (match.kind === 'no-method') {
      return send(res, 405, { errors: [`${method} is not allowed on ${url.pathname}`] }, { allow: match.allow.join(', ') });
    }

    let body: Buffer;
    try {
      body = await readBody(req, config.max_body_bytes);
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error;
      return send(res, 413, { errors: [`the body is larger than ${config.max_body_bytes} bytes`] }, { connection: 'close' });
    }

    let resettable = false;
    // An API request's latency starts as it is read, and its work is done meanwhile: the answer leaves when the
    // latency has passed (a service's latency includes its own work). Work done after the wait would add to it, and
    // requests that arrive together would then be worked one after another, each answer later than the one before.
    if (!isOperator) {
      deps.calls.count(countedEndpoint(method, path));
      const faults = deps.faults.current();
      const fault = drawFault(faults, deps.random);
      if (fault.delayMs > 0) latency = (deps.latency ?? sleep)(fault.delayMs);
      if (fault.refusal === 429) return answer(429, { errors: ['rate limited'] }, { 'retry-after': String(faults.retry_after_s) });
      if (fault.refusal) return sendReply(failure(fault.refusal, 'service trouble (injected fault)'));
      // A write that lands late: a client that timed out and looked it up may find nothing yet [D7], then see it appear.
      if (fault.late) await latency;
      const refusal = authenticate(req, body, config, deps.store);
      if (refusal) return sendReply(failure(401, refusal));
      resettable = true;
    }

    const parsed = parseJson(body);
    if (!parsed.ok) return sendReply(failure(400, 'the body is not valid JSON'));
    let result: Reply;
    try {
      result = match.handler({ params: match.params, query: url.searchParams, body: parsed.value });
    } finally {
      // Even its internal error (a 500, below) answers no sooner than the latency.
      await latency;
    }
    if (resettable && result.resettable && drawResetAfterCommit(deps.faults.current(), result.resettable, deps.random)) {
      deps.log(`fault: ${result.resettable} took effect; connection reset before the answer`);
      req.socket.destroy();
      return;
    }
    return sendReply(result);

    function sendReply(r: Reply): Promise<void> {
      return answer(r.status, isOperator ? r.body : shape(r, config.live_style));
    }

    /** Every answer leaves once the latency, if any, has passed. */
    async function answer(status: number, body: unknown, headers?: Record<string, string>): Promise<void> {
      await latency;
      send(res, status, body, headers);
    }
  }

  return createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      deps.log(`internal error on ${req.method} ${req.url}: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) send(res, 500, { errors: ['internal error'] });
      else res.destroy();
    });
  });
}
