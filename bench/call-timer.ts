/**
 * Loaded into the sandbox's process by a benchmark (`node --import`): how long
 * each request took as the sandbox saw it, from its headers' arrival to its
 * answer handed to the socket. Against the same calls timed by paybatch, the
 * difference is the way there and back and the wait in each side's event loop,
 * which the sandbox's latency does not include. Written at exit, as JSON, to the
 * file PAYBATCH_BENCH_CALL_TIMES names.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import { callSpread } from './call-spread.js';

const file = process.env.PAYBATCH_BENCH_CALL_TIMES;
if (file) {
  const arrived = new WeakMap<IncomingMessage, number>();
  const durations: number[] = [];
  subscribe('http.server.request.start', (message) => {
    arrived.set((message as { request: IncomingMessage }).request, performance.now());
  });
  subscribe('http.server.response.finish', (message) => {
    const started = arrived.get((message as { request: IncomingMessage }).request);
    if (started !== undefined) durations.push(performance.now() - started);
  });
  process.on('exit', () => writeFileSync(file, JSON.stringify(callSpread(durations))));
}
