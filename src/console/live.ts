/**
 * Live progress without reloading: a server-sent event stream that says
 * "changed" when what a page shows has moved (a batch's progress, the list of
 * batches, the rows in attention); the page's script then fetches the page
 * again and swaps its live part in. The store is looked at once a second per
 * stream, and the streams are few (a person's open tabs): each session may hold
 * console.live_streams_per_session of them (more are refused, 429), so that one
 * viewer cannot use up the console's MOST_STREAMS and leave everyone else none.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { attentionRows } from './console-data.js';
import { hashSecret } from './auth.js';
import type { ConsoleDeps } from './deps.js';

const LOOK_EVERY_MS = 1_000;
const MOST_STREAMS = 50;
const RECENT_MS = 7 * 24 * 3_600_000;

/** The streams open on one console. */
export interface LiveCount {
  open: number;
  /** Streams open per session, by the hash of its token. */
  bySession: Map<string, number>;
  /** Ends every open stream: called when the server closes. */
  closers: Set<() => void>;
}

/** A digest of what the page `what` shows that can change; null when `what` names nothing. */
async function fingerprint(deps: ConsoleDeps, what: string): Promise<string | null> {
  const { store, clock } = deps;
  let facts: unknown;
  if (what === 'batches') {
    const batches = await store.recentBatches(new Date(clock.now() - RECENT_MS).toISOString());
    facts = await Promise.all(batches.map(async (b) => [b.id, b.status, b.approval, b.settled_at, await store.progress(b.id)]));
  } else if (what.startsWith('batch:')) {
    const batch = await store.batch(what.slice('batch:'.length));
    if (!batch) return null;
    facts = [batch.status, batch.approval, batch.settled_at, batch.changes_by_webhook, batch.changes_by_polling, batch.changes_by_answer, await store.progress(batch.id)];
  } else if (what === 'attention') {
    facts = (await attentionRows(store, clock)).map((a) => [a.batch, a.line, a.state, a.cancellable]);
  } else {
    return null;
  }
  return createHash('sha256').update(JSON.stringify(facts)).digest('hex');
}

export async function liveStream(deps: ConsoleDeps, streams: LiveCount, request: FastifyRequest, reply: FastifyReply, what: string): Promise<FastifyReply | void> {
  const session = hashSecret(request.sessionToken ?? '');
  const mine = streams.bySession.get(session) ?? 0;
  const most = deps.config.console.live_streams_per_session;
  if (mine >= most) return reply.code(429).type('text/plain').send(`this session has ${most} live pages open already: close one, or reload this page later\n`);
  if (streams.open >= MOST_STREAMS) return reply.code(503).type('text/plain').send('too many live pages open: reload later\n');
  // The slots are taken before anything is awaited, and given back however the stream ends.
  streams.open += 1;
  streams.bySession.set(session, mine + 1);
  let timer: NodeJS.Timeout | null = null;
  let ended = false;
  const closer = (): void => {
    end();
    reply.raw.destroy();
  };
  const end = (): void => {
    if (ended) return;
    ended = true;
    if (timer) clearInterval(timer);
    streams.open -= 1;
    const left = (streams.bySession.get(session) ?? 1) - 1;
    if (left > 0) streams.bySession.set(session, left);
    else streams.bySession.delete(session);
    streams.closers.delete(closer);
  };
  request.raw.once('close', end);
  let last: string | null;
  try {
    last = await fingerprint(deps, what);
  } catch (error) {
    end();
    throw error;
  }
  if (last === null) {
    end();
    return reply.code(404).type('text/plain').send('nothing to follow\n');
  }
  if (ended || request.raw.destroyed) {
    end();
    return;
  }
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', connection: 'keep-alive' });
  out.write('retry: 3000\nevent: ready\ndata: {}\n\n');
  let looking = false;
  timer = setInterval(() => {
    if (looking || ended) return;
    looking = true;
    fingerprint(deps, what)
      .then((now) => {
        if (now !== null && now !== last) {
          last = now;
          out.write(`event: changed\ndata: ${JSON.stringify({ at: new Date(deps.clock.now()).toISOString() })}\n\n`);
        } else {
          out.write(': still here\n\n');
        }
      })
      .catch(() => out.write(': the store did not answer\n\n'))
      .finally(() => {
        looking = false;
      });
  }, LOOK_EVERY_MS);
  // A stream never keeps the process alive on its own, and the server's close ends it.
  timer.unref();
  streams.closers.add(closer);
}
