/**
 * An HTTP proxy in front of the sandbox that names each call paybatch makes
 * (create, fund, read, lookup) and lets a test act at that exact moment: kill
 * the caller before the call reaches the service, after the service committed
 * it but before its answer comes back, or just after the answer was delivered.
 * This is how the crash tests land a SIGKILL on each stage of a payout, by
 * event rather than by a guessed delay.
 */
import { createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SandboxConfigInput } from '../../src/sandbox/config.js';
import type { EngineContext } from './engine.js';
import { engineContext } from './engine.js';

export type ServiceCall = 'create' | 'fund' | 'read' | 'lookup' | 'other';

/**
 * What the tap does with one call:
 * - pass: forward it and deliver the answer;
 * - before: the service never sees it (`then` runs, and is awaited, before the connection is cut);
 * - lost: the service commits it, its answer is never delivered (`then` runs, and is awaited, before the cut);
 * - after: the answer is delivered whole, then `then` runs;
 * - held: the call waits at the tap, unseen by the service, until `until` settles; then it passes;
 * - refused: the call waits at the tap likewise, then is answered 401 (credentials refused) without reaching the service.
 * When the service itself cuts the connection (a fault it was told to inject), `then` runs as for `lost`.
 */
export type TapAction = { at: 'pass' } | { at: 'before' | 'lost' | 'after'; then: () => Promise<void> | void } | { at: 'held' | 'refused'; until: Promise<void> };

export interface ServiceTap {
  /** The base URL to give paybatch instead of the sandbox's. */
  url: string;
  /** Decides each call in turn; `n` counts calls of that kind since the last reset(). */
  decide: (call: ServiceCall, n: number) => TapAction;
  /** Calls of each kind since the last reset(). */
  readonly counts: Readonly<Record<ServiceCall, number>>;
  reset(): void;
  close(): Promise<void>;
}

/** Which call of the service interface a request is ([4] of the interface), from its method and path below the base path. */
export function serviceCall(method: string, path: string): ServiceCall {
  const [route, query = ''] = path.split('?');
  if (method === 'POST' && route === '/transactions') return 'create';
  if (method === 'POST' && /^\/transactions\/[^/]+\/fund$/.test(route ?? '')) return 'fund';
  if (method === 'GET' && route === '/transactions' && query.includes('external_id=')) return 'lookup';
  if (method === 'GET' && /^\/transactions\/[^/]+$/.test(route ?? '')) return 'read';
  return 'other';
}

const zero = (): Record<ServiceCall, number> => ({ create: 0, fund: 0, read: 0, lookup: 0, other: 0 });

function bodyOf(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

export async function serviceTap(serviceUrl: string): Promise<ServiceTap> {
  const target = new URL(serviceUrl);
  const basePath = target.pathname.replace(/\/$/, '');
  let counts = zero();
  const forward = (req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const upstream = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        bodyOf(answer).then((answerBody) => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: answerBody }), reject);
      });
      upstream.on('error', reject);
      upstream.end(body);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').startsWith(basePath) ? (req.url ?? '').slice(basePath.length) : (req.url ?? '');
    const call = serviceCall(req.method ?? 'GET', path);
    counts[call] += 1;
    const action = tap.decide(call, counts[call]);
    const body = await bodyOf(req);
    if (action.at === 'before') {
      await action.then();
      req.socket.destroy();
      return;
    }
    if (action.at === 'held' || action.at === 'refused') await action.until;
    if (action.at === 'refused') {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ message: 'key revoked' }] }));
      return;
    }
    const answer = await forward(req, body).catch(() => null);
    // The service cut the connection itself (a fault it injects): the answer is lost either way.
    if (answer === null || action.at === 'lost') {
      if (action.at === 'lost' || action.at === 'after') await action.then();
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body, () => {
      if (action.at === 'after') void action.then();
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const tap: ServiceTap = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${basePath}`,
    decide: () => ({ at: 'pass' }),
    get counts() {
      return counts;
    },
    reset() {
      counts = zero();
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return tap;
}

/**
 * An engine context (engine.ts) whose service is its sandbox behind a tap, and the tap: the context's stop closes the
 * tap too.
 */
export async function engineBehindTap(sandbox: SandboxConfigInput): Promise<{ ctx: EngineContext; tap: ServiceTap }> {
  const ctx = await engineContext(sandbox);
  const tap = await serviceTap(ctx.sandbox.url);
  ctx.serviceUrl = tap.url;
  const stopContext = ctx.stop.bind(ctx);
  ctx.stop = async () => {
    await tap.close();
    await stopContext();
  };
  return { ctx, tap };
}
