/**
 * A payout service that lies: a real HTTP reverse proxy in front of the real
 * sandbox. The sandbox's own faults fail honestly (429, 5xx, a reset); checking
 * what we are told against what we asked (STYLE 14) needs a service that
 * answers with another transaction, another amount, a refusal it never made,
 * or nothing at all after the change took effect.
 *
 * The proxy verifies each request's signature [D2] exactly as the sandbox does,
 * over the URL as it arrived, so a client that signs one spelling of a URL and
 * sends another is caught here too. Then the first matching rule acts; with
 * none, the request goes to the sandbox byte for byte, re-signed.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { signatureFor, signaturesMatch, signedHeaders } from '../../src/sandbox/signature.js';
import type { Clock } from '../../src/clock.js';
import type { SandboxConfigInput } from '../../src/sandbox/config.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { afterEach, beforeEach } from 'vitest';
import type { EngineContext } from './engine.js';
import { engineContext } from './engine.js';

export interface LieContext {
  method: string;
  /** After the base path, query included, as it arrived: `/transactions?external_id=T-1`. */
  path: string;
  requestBody: unknown;
  /** The sandbox's status for the forwarded request. */
  status: number;
  /** A signed call straight to the sandbox, e.g. to answer with another real transaction. */
  sandbox(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

export type Transform = (body: unknown, ctx: LieContext) => unknown;

export type LieAction =
  | { kind: 'forward'; label: string | null; delayMs: number; transform?: Transform }
  | { kind: 'lose_answer'; label: string }
  | { kind: 'answer'; label: string; status: number; body: unknown; headers: Record<string, string> };

export interface LieRule {
  match: { method?: string; path?: RegExp; body?: (body: unknown) => boolean };
  /** How many requests the rule acts on; unlimited when absent. */
  times?: number;
  act: LieAction;
}

/** `status` 0: dropped without an answer. `lie`: the acting rule's label, 'bad_signature' when the proxy refused [D2]. */
export interface Seen { method: string; path: string; status: number; lie: string | null }

export interface LyingService {
  /** http://127.0.0.1:PORT/v1: the baseUrl to give a PayoutClient, with the sandbox's key and secret. */
  url: string; apiKey: string; apiSecret: string;
  /** Rules match in the order they were added. */
  lie(rule: LieRule): void;
  /** Forgets the rules, what was seen and the bad signatures. */
  clear(): void;
  seen: Seen[];
  /** Requests refused for authentication [D2]: bad signature, missing header, unknown key, reused nonce. */
  readonly badSignatures: number;
  /** The most calls on transactions (create, read, fund, cancel, lookup) in flight at once, so far. */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/** Paths after the base path, for `match.path`. */
export const PATHS = {
  create: /^\/transactions$/,
  lookup: /^\/transactions\?/,
  /** GET reads it, DELETE cancels it [D11]. */
  transaction: /^\/transactions\/[^/?]+$/,
  fund: /^\/transactions\/[^/?]+\/fund$/,
};

export const rule = (method: string, path: RegExp, act: LieAction, times?: number): LieRule => ({ match: { method, path }, times, act });

// ---- actions

export const forward = (): LieAction => ({ kind: 'forward', label: null, delayMs: 0 });
export const delay = (ms: number): LieAction => ({ kind: 'forward', label: 'delayed', delayMs: ms });
export const transform = (fn: Transform, label = 'transformed'): LieAction => ({ kind: 'forward', label, delayMs: 0, transform: fn });
/** The call takes effect at the sandbox; the client never hears of it. */
export const loseAnswerAfterCommit = (): LieAction => ({ kind: 'lose_answer', label: 'lost_after_commit' });
export const answer = (status: number, body: unknown, headers: Record<string, string> = {}): LieAction => ({ kind: 'answer', label: `answered_${status}`, status, body, headers });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isTransaction = (v: unknown): v is Record<string, unknown> => isObject(v) && typeof v.id === 'string' && typeof v.external_id === 'string';

/** [D4] Changes the answer's object, bare or wrapped as `{object, meta}`. */
function inside(body: unknown, change: (object: unknown) => unknown): unknown {
  return isObject(body) && 'object' in body ? { ...body, object: change(body.object) } : change(body);
}

/** An answer's body with each of its transactions changed, alone or in a list [D7]; errors and other shapes pass untouched. */
export function eachTransactionIn(body: unknown, change: (tx: Record<string, unknown>) => Record<string, unknown>): unknown {
  const one = (v: unknown): unknown => (isTransaction(v) ? change(v) : v);
  return inside(body, (o) => (Array.isArray(o) ? o.map(one) : one(o)));
}

/** Each transaction of the answer changed (see eachTransactionIn). */
export const eachTransaction = (label: string, change: (tx: Record<string, unknown>) => Record<string, unknown>): LieAction =>
  transform((body) => eachTransactionIn(body, change), label);

const scaled = (v: unknown, factor: bigint): unknown => (typeof v === 'string' && /^\d+$/.test(v) ? (BigInt(v) * factor).toString() : v);

export const scaleOutputAmount = (factor: bigint): LieAction =>
  eachTransaction('scaled_output_amount', (tx) => ({ ...tx, output_amount_in_cents: scaled(tx.output_amount_in_cents, factor) }));
export const scaleInputAmount = (factor: bigint): LieAction =>
  eachTransaction('scaled_input_amount', (tx) => ({ ...tx, input_amount_in_cents: scaled(tx.input_amount_in_cents, factor) }));
export const otherOutputCurrency = (currency: string): LieAction =>
  eachTransaction('other_output_currency', (tx) => ({ ...tx, output_currency: currency }));
export const otherInputCurrency = (currency: string): LieAction =>
  eachTransaction('other_input_currency', (tx) => ({ ...tx, input_currency: currency }));

let foreignCount = 0;

/** A transaction nobody asked for: not ours, another amount, another person. */
export function foreignTransaction(state = 'approved'): Record<string, unknown> {
  const n = ++foreignCount;
  const now = new Date();
  return {
    id: `tr_foreign_${n}`, external_id: `FOREIGN-${n}`, type: 'bank', state, state_reason: null, state_reason_details: null, may_cancel: true,
    output_amount_in_cents: '77777700', output_currency: 'USD', input_amount_in_cents: '77777700', input_currency: 'USD', refunded_amount_in_cents: null,
    sender: { id: `se_foreign_${n}`, external_id: `S-FOREIGN-${n}`, type: 'person', first_name: 'Eve', last_name: 'Dropper', country_code: 'USA', state: 'approved' },
    recipient: { first_name: 'Mallory', last_name: 'Mallet', country_code: 'USA', bic: 'CHASUS33', bank_account: '987654321', bank_account_type: 'checking' },
    created_at: now.toISOString(), updated_at: now.toISOString(), expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
    funded_at: null, paid_at: null,
  };
}

/**
 * The answer names a foreign transaction instead of the one asked for; a lookup
 * answers `[foreign]`. The state is the one given, else the real answer's. With
 * `reuse`, every answer names the same foreign transaction.
 */
export function otherTransaction(options: { state?: string; reuse?: boolean } = {}): LieAction {
  let fixed: Record<string, unknown> | undefined;
  const make = (state: unknown): Record<string, unknown> => {
    const tx = fixed ?? foreignTransaction(options.state ?? (typeof state === 'string' ? state : 'approved'));
    if (options.reuse) fixed = tx;
    return tx;
  };
  return transform((body) => inside(body, (o) => {
    if (Array.isArray(o)) return [make(isTransaction(o[0]) ? o[0].state : undefined)];
    return isTransaction(o) ? make(o.state) : o;
  }), 'other_transaction');
}

/** A lookup [D7] that also lists a foreign transaction beside the real ones. */
export const lookupAlso = (foreign: Record<string, unknown> = foreignTransaction()): LieAction =>
  transform((body) => inside(body, (o) => (Array.isArray(o) ? [...o, foreign] : o)), 'lookup_also');

// ---- the proxy

function parseJson(bytes: Buffer): unknown {
  try { return bytes.length === 0 ? undefined : JSON.parse(bytes.toString('utf8')); } catch { return undefined; }
}

/** The headers of an answer a client acts on. */
const PASSED_HEADERS = ['content-type', 'retry-after', 'location', 'allow'];

export async function lyingService(sandbox: RunningSandbox): Promise<LyingService> {
  const target = new URL(sandbox.url);
  const base = target.pathname.replace(/\/+$/, '');
  // A path, not a URL string: undici's request(urlString) would re-spell the query (`'` as %27).
  const pool = new Pool(target.origin, { connections: 16 });
  const rules: LieRule[] = [];
  const nonces = new Set<string>();
  const seen: Seen[] = [];
  let badSignatures = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  async function toSandbox(method: string, path: string, body: Buffer, contentType: string | undefined): Promise<Dispatcher.ResponseData & { bytes: Buffer }> {
    const headers: Record<string, string> = signedHeaders(sandbox.apiKey, sandbox.apiSecret, method, `${target.origin}${base}${path}`, body);
    if (contentType) headers['content-type'] = contentType;
    const response = await pool.request({ method: method as Dispatcher.HttpMethod, path: `${base}${path}`, headers, body: body.length > 0 ? body : undefined });
    return Object.assign(response, { bytes: Buffer.from(await response.body.arrayBuffer()) });
  }

  /** [D2] As src/sandbox/http-server.ts does it: the URL as it arrived, the raw body. */
  function authenticate(req: IncomingMessage, body: Buffer): string | null {
    const { 'authorization-key': key, 'authorization-nonce': nonce, 'authorization-signature': signature } = req.headers;
    if (typeof key !== 'string' || typeof nonce !== 'string' || typeof signature !== 'string' || !key || !nonce || !signature) {
      return 'the Authorization-Key, Authorization-Nonce and Authorization-Signature headers are required';
    }
    if (!signaturesMatch(sandbox.apiKey, key)) return 'unknown API key';
    const url = `http://${req.headers.host ?? ''}${req.url ?? ''}`;
    if (!signaturesMatch(signatureFor(sandbox.apiSecret, nonce, req.method ?? '', url, body), signature)) {
      return 'the signature does not match the request';
    }
    if (nonces.has(nonce)) return 'the nonce was already used';
    nonces.add(nonce);
    return null;
  }

  function take(method: string, path: string, body: unknown): LieRule | undefined {
    const found = rules.find(({ match, times }) => (times === undefined || times > 0)
      && (!match.method || match.method.toUpperCase() === method)
      && (!match.path || match.path.test(path))
      && (!match.body || match.body(body)));
    if (found?.times !== undefined) found.times -= 1;
    return found;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const raw = req.url ?? '/';
    const path = raw.slice(base.length) || '/';
    const send = (status: number, bytes: Buffer | string, headers: Record<string, string>, lie: string | null): void => {
      seen.push({ method, path, status, lie });
      res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(bytes)) }).end(bytes);
    };
    const sendJson = (status: number, body: unknown, headers: Record<string, string>, lie: string | null): void =>
      send(status, body === undefined ? '' : JSON.stringify(body), body === undefined ? headers : { 'content-type': 'application/json', ...headers }, lie);

    if (!(raw.startsWith(`${base}/`) || raw.startsWith(`${base}?`))) return sendJson(404, { errors: [`no such path: ${raw}`] }, {}, null);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const refusal = authenticate(req, body);
    if (refusal) {
      badSignatures += 1;
      return sendJson(401, { errors: [refusal] }, {}, 'bad_signature');
    }
    const requestBody = parseJson(body);
    const act = take(method, path, requestBody)?.act ?? forward();
    if (act.kind === 'answer') return sendJson(act.status, act.body, act.headers, act.label);
    if (act.kind === 'forward' && act.delayMs > 0) await sleep(act.delayMs);

    const answered = await toSandbox(method, path, body, req.headers['content-type']);
    if (act.kind === 'lose_answer') {
      seen.push({ method, path, status: 0, lie: act.label });
      res.socket?.destroy();
      return;
    }
    const headers = Object.fromEntries(PASSED_HEADERS.flatMap((name) => {
      const value = answered.headers[name];
      return typeof value === 'string' ? [[name, value]] : [];
    })) as Record<string, string>;
    const parsed = parseJson(answered.bytes);
    if (!act.transform || (parsed === undefined && answered.bytes.length > 0)) return send(answered.statusCode, answered.bytes, headers, act.label);
    const ctx: LieContext = {
      method, path, requestBody, status: answered.statusCode,
      async sandbox(m, p, b) {
        const r = await toSandbox(m.toUpperCase(), p, Buffer.from(b === undefined ? '' : JSON.stringify(b)), 'application/json');
        return { status: r.statusCode, body: parseJson(r.bytes) };
      },
    };
    return sendJson(answered.statusCode, await act.transform(parsed, ctx), headers, act.label);
  }

  const server = createServer((req, res) => {
    const counted = /\/transactions/.test(req.url ?? '');
    if (counted) maxInFlight = Math.max(maxInFlight, ++inFlight);
    const done = (): void => {
      if (counted) inFlight -= 1;
    };
    handle(req, res).finally(done).catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      const text = JSON.stringify({ errors: [`lying service: ${(error as Error).message}`] });
      seen.push({ method: req.method ?? 'GET', path: req.url ?? '/', status: 502, lie: 'proxy_error' });
      res.writeHead(502, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${base}`,
    apiKey: sandbox.apiKey,
    apiSecret: sandbox.apiSecret,
    lie: (r) => void rules.push({ ...r }),
    clear: () => void (rules.length = seen.length = badSignatures = 0),
    seen,
    get badSignatures() { return badSignatures; },
    get maxInFlight() { return maxInFlight; },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}

/**
 * For each test of a suite (call it inside its describe): an engine context
 * whose service is a lying proxy in front of its sandbox, made before the test,
 * both closed after it. `again(sandbox, { clock })` makes both anew within a
 * test, on a sandbox of other settings (and the engine on another clock). Every test of a lying service starts here.
 */
export function engineBehindLiar(): { readonly ctx: EngineContext; readonly liar: LyingService; again(sandbox: SandboxConfigInput, options?: { clock?: Clock }): Promise<void> } {
  let ctx: EngineContext | undefined;
  let liar: LyingService | undefined;
  const make = async (sandbox: SandboxConfigInput = {}, options: { clock?: Clock } = {}): Promise<void> => {
    ctx = await engineContext(sandbox, options);
    liar = await lyingService(ctx.sandbox);
    ctx.serviceUrl = liar.url;
  };
  const close = async (): Promise<void> => {
    await liar?.close();
    await ctx?.stop();
    ctx = liar = undefined;
  };
  beforeEach(() => make());
  afterEach(close);
  const made = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the engine and its lying service are made before each test only');
    return value;
  };
  return {
    get ctx(): EngineContext {
      return made(ctx);
    },
    get liar(): LyingService {
      return made(liar);
    },
    async again(sandbox, options) {
      await close();
      await make(sandbox, options);
    },
  };
}
