/**
 * `npm run bench:submit` (started by submit.ts): submits a batch of BENCH_ROWS rows (default 10,000)
 * through the payout engine (intent, create, quote check, reserve, fund, each
 * step in SQLite) against the sandbox in its own process, with a fixed latency L
 * on every call and concurrency C. Each row takes two calls, so C/(2·L) rows/s
 * is the bound; prints rows/s, the bound, their ratio (goal: at least 0.9), and
 * peak RSS; then the same with no added latency (goal: at least 2,000 rows/s),
 * where paybatch's own CPU is the limit: that run is profiled, and its CPU time
 * per row is printed by part (the store, the HTTP client, the engine's
 * decisions, the audit chain, garbage collection), beside its goal (at most
 * 150 µs, issue 42).
 *
 * What the sandbox and the HTTP client allow on this machine is printed too:
 * the same calls (create then fund, C at a time) with nothing stored, at L and
 * with no added latency, and a plain Node server that only waits L answering a
 * plain client. The ratio of
 * the engine to the first says what the engine itself costs.
 *
 * The engine's two runs are made in rounds, alternating, and the median round
 * is quoted with the spread: on this machine one run drifts from the next by a
 * fifth.
 *
 * With BENCH_RATE_LIMIT=N, one more run under service.rate_limits.overall N a second (a limit that binds: N well under
 * the bound), of 20·N rows: the most calls the sandbox counted in any one-second window beside N (goal: never over),
 * and the calls' rate over N (goal: at least 0.95).
 *
 *   BENCH_ROWS, BENCH_LATENCY_MS (default 20), BENCH_CONCURRENCY (default 32), BENCH_ROUNDS (default 3), BENCH_RATE_LIMIT
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { availableParallelism, tmpdir } from 'node:os';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { PayoutClient } from '../src/api/client.js';
import { configuredRateLimiter } from '../src/api/rate-limiter.js';
import type { WindowFigures } from '../src/sandbox/call-windows.js';
import { printRateFigures } from './rate-figures.js';
import { systemClock } from '../src/clock.js';
import { configSchema } from '../src/config/config.js';
import { readerOptions, ruleOptions } from '../src/batch/batch-options.js';
import type { PayoutRequest } from '../src/api/payout-request.js';
import { validateFile } from '../src/batch/validate-file.js';
import { takeFile } from '../src/engine/intake.js';
import { Pipeline } from '../src/engine/pipeline.js';
import { releaseBatch } from '../src/engine/release.js';
import type { BatchRecord } from '../src/store/port.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { openWorkspace } from '../src/workspace/workspace.js';
import { generateBatch } from './generate-batch.js';
import type { BothSides, CallSpread } from './call-spread.js';
import { callSpread, spreadText } from './call-spread.js';
import { peakRssMb, startSandboxProcess } from './sandbox-process.js';

const rows = Number(process.env.BENCH_ROWS ?? 10_000);
/** paybatch's own CPU a row with no added latency (issue 42), the store, the client, the engine and collection together. */
const CPU_GOAL_MICROS = 150;
const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 20);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const rateLimit = process.env.BENCH_RATE_LIMIT ? Number(process.env.BENCH_RATE_LIMIT) : null;

/** Where a profiled function's time goes, by the file it is in. */
const PARTS: [string, (url: string, name: string) => boolean][] = [
  ['store (SQLite)', (url) => url.includes('/src/store/') || url.includes('better-sqlite3')],
  ['HTTP client (signing, calls, answers)', (url) => url.includes('/src/api/') || url.includes('undici') || url.startsWith('node:')],
  ['engine (decisions, scheduling)', (url) => url.includes('/src/engine/') || url.includes('/src/payout-states')],
  ['audit chain', (url) => url.includes('/src/audit/')],
  ['garbage collection', (_url, name) => name === '(garbage collector)'],
];

interface ProfileNode { id: number; callFrame: { url: string; functionName: string }; children?: number[] }

/**
 * Self time of a CPU profile by part, in microseconds; idle time left out. Time
 * in built-in code (JSON, strings, SQLite's native side) counts for the nearest
 * caller that has a file.
 */
function byPart(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }): Map<string, number> {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const owner = (id: number): ProfileNode => {
    let node = nodes.get(id) as ProfileNode;
    while (node.callFrame.url === '' && parent.has(node.id) && !node.callFrame.functionName.startsWith('(')) node = nodes.get(parent.get(node.id) as number) as ProfileNode;
    return node;
  };
  const parts = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const { functionName } = (nodes.get(id) as ProfileNode).callFrame;
    if (functionName === '(idle)' || functionName === '(program)') return;
    const { url } = owner(id).callFrame;
    const part = PARTS.find(([, matches]) => matches(url, functionName))?.[0] ?? 'other (promises, timers, the rest)';
    parts.set(part, (parts.get(part) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  return parts;
}

/**
 * Starts measuring how busy the event loop is: returns how to stop, which gives
 * the mean time between the turns of a 1 ms timer, in ms (about 1.1 when idle).
 * An answer that arrives while the loop is busy waits to be read.
 */
function loopTurns(): () => number {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return () => {
    histogram.disable();
    return histogram.mean / 1e6;
  };
}

/** Every call `client` makes from now on, its duration in seconds. */
function recordCalls(client: PayoutClient): number[] {
  const calls: number[] = [];
  client.observeCalls((_endpoint, _outcome, seconds) => calls.push(seconds));
  return calls;
}

/** The median of call durations, in ms. */
function medianMs(seconds: number[]): number {
  const sorted = [...seconds].sort((a, b) => a - b);
  return (sorted[Math.floor(sorted.length / 2)] ?? 0) * 1000;
}

async function profiled<T>(work: () => Promise<T>): Promise<{ result: T; parts: Map<string, number> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> => new Promise((resolve, reject) => session.post(method, params, (error, answer) => (error ? reject(error) : resolve(answer))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  try {
    const result = await work();
    const { profile } = (await post('Profiler.stop')) as { profile: Parameters<typeof byPart>[0] };
    return { result, parts: byPart(profile) };
  } finally {
    session.disconnect();
  }
}

interface Submitted {
  rate: number;
  seconds: number;
  cpuMicros: number;
  sandboxCpuMicros: number;
  callMs: number;
  callsPerRowMs: number;
  loopTurnMs: number;
  parts: Map<string, number> | null;
  /** With a latency: the calls as paybatch timed them, and as the sandbox did. */
  calls: BothSides | null;
  /** Under a rate limit: the sandbox's count of all calls per one-second window. */
  windows?: WindowFigures;
}

/** Both sides' timings of the calls (paybatch's durations in seconds), or null when the sandbox did not time them. */
const bothSides = (seconds: number[], sandbox: CallSpread | null): BothSides | null =>
  sandbox && { paybatch: callSpread(seconds.map((call) => call * 1000)), sandbox };

/** Where a sandbox started for `label` writes its calls' durations; with no added latency they are not timed. */
const timesFileFor = (dir: string, label: string, latency: number): string | undefined => (latency > 0 ? join(dir, `${label}.call-times.json`) : undefined);

async function submitOnce(dir: string, label: string, latency: number, profile = false, limit: number | null = null, file = 'batch.csv'): Promise<Submitted> {
  const timesFile = timesFileFor(dir, label, latency);
  const sandbox = await startSandboxProcess(sandboxConfig(dir, label, latency), [], timesFile);
  const workspace = openWorkspace(join(dir, label));
  const store = SqliteStore.open(workspace.database);
  const config = configSchema.parse({ engine: { concurrency } });
  const client = new PayoutClient({
    baseUrl: sandbox.url, credentials: { apiKey: sandbox.key, apiSecret: sandbox.secret },
    timeoutMs: 10_000, retry: { baseMs: 50, capMs: 1000, attempts: 5 }, maxAnswerBytes: 1024 * 1024, connections: concurrency,
    rateLimiter: limit === null ? undefined : configuredRateLimiter({ overall: { requests: limit, per: 'second' } }),
  });
  let submitted: Omit<Submitted, 'calls'>;
  let windows: WindowFigures | undefined;
  let calls: number[] = [];
  let sandboxCalls: CallSpread | null = null;
  try {
    const source = join(dir, file);
    const inbox = join(workspace.folders.inbox, 'batch.csv');
    writeFileSync(inbox, readFileSync(source));
    // Complete (its marker says so): taken in, and sent once its second look (a marked file's short one) is past.
    writeFileSync(`${inbox}.done`, '');
    const intake = await takeFile(inbox, { workspace, store, batch: config.batch, intake: config.intake, policy: 'skip_invalid', clock: systemClock });
    if (intake.kind !== 'accepted') throw new Error(`the generated batch was not accepted: ${intake.kind}`);
    for (;;) {
      const release = await releaseBatch((await store.batch(intake.batch)) as BatchRecord, { workspace, store, clock: systemClock });
      if (release.kind !== 'wait') break;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, release.untilMs - Date.now())));
    }
    const pipeline = new Pipeline({ store, client, clock: systemClock, engine: config.engine, log: () => {} });
    calls = recordCalls(client);
    const stopTurns = loopTurns();
    const started = performance.now();
    const cpu = process.cpuUsage();
    const sandboxCpu = sandbox.cpuSeconds();
    let parts: Map<string, number> | null = null;
    if (profile) parts = (await profiled(() => pipeline.submit(intake.batch))).parts;
    else await pipeline.submit(intake.batch);
    const loopTurnMs = stopTurns();
    const used = process.cpuUsage(cpu);
    const sandboxSeconds = sandbox.cpuSeconds() - sandboxCpu;
    const seconds = (performance.now() - started) / 1000;
    const funded = (await store.rowsInPhases(intake.batch, ['funded'], 0, 1_000_000)).length;
    if (funded !== intake.ready) throw new Error(`${funded} of ${intake.ready} rows funded`);
    const callsPerRowMs = (calls.reduce((sum, call) => sum + call, 0) * 1000) / intake.ready;
    submitted = {
      rate: intake.ready / seconds, seconds, cpuMicros: (used.user + used.system) / intake.ready, sandboxCpuMicros: (sandboxSeconds * 1e6) / intake.ready, callMs: medianMs(calls), callsPerRowMs, loopTurnMs,
      parts: parts && new Map([...parts].map(([part, micros]) => [part, micros / intake.ready])),
    };
    if (limit !== null) windows = await callWindows(sandbox.url);
  } finally {
    await client.close();
    await store.close();
    sandboxCalls = await sandbox.stopTimed();
  }
  return { ...submitted, calls: bothSides(calls, sandboxCalls), windows };
}

/** The sandbox's count of all calls per one-second window (its operator controls, beside the API's base path). */
async function callWindows(baseUrl: string): Promise<WindowFigures> {
  const answer = await fetch(new URL('/_sandbox/call-windows', baseUrl));
  return ((await answer.json()) as Record<string, WindowFigures>).overall as WindowFigures;
}

/** The run under BENCH_RATE_LIMIT: its lines, and whether both goals were met. */
async function rateLimitedRun(dir: string, limit: number): Promise<boolean> {
  const count = limit * 20;
  await generateBatch(join(dir, 'rate-limited.csv'), count);
  const run = await submitOnce(dir, 'rate-limited', latencyMs, false, limit, 'rate-limited.csv');
  const w = run.windows as WindowFigures;
  console.log(`  under service.rate_limits.overall ${limit}/s (${count} generated rows, ${latencyMs} ms latency, concurrency ${concurrency}):`);
  return printRateFigures(w, limit);
}

function sandboxConfig(dir: string, label: string, latency: number): string {
  const file = join(dir, `${label}.sandbox.json`);
  writeFileSync(file, JSON.stringify({
    balances: { USD: '900000000000000000', EUR: '900000000000000000' },
    // Payouts far in the future: this measures submission, not following.
    payout: { clearing_ms: 3_600_000, delay_ms: [3_600_000, 3_600_000] },
    faults: { latency: { rate: latency > 0 ? 1 : 0, min_ms: latency, max_ms: latency } },
  }));
  return file;
}

/** The round whose rate is the median (the lower of the two middle ones for an even count). */
function medianRound<T extends { rate: number }>(runs: T[]): T {
  return [...runs].sort((a, b) => a.rate - b.rate)[Math.floor((runs.length - 1) / 2)] as T;
}

/** "(median of 3 rounds: 1,200 to 1,500)", or nothing for one round. */
function spread(runs: { rate: number }[], show: (rate: number) => string): string {
  if (runs.length < 2) return '';
  const rates = runs.map((run) => run.rate);
  return `; median of ${runs.length} rounds, ${show(Math.min(...rates))} to ${show(Math.max(...rates))}`;
}

/** C loops taking the next of `count` items until none is left. */
async function inParallel(count: number, each: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await each(next++);
  }));
  return count / ((performance.now() - started) / 1000);
}

/** Rows/s of the calls alone: the batch's requests created and funded through the same client, nothing stored; and a call's median, in ms. */
async function callsOnly(dir: string, requests: PayoutRequest[], latency: number): Promise<{ rate: number; callMs: number; loopTurnMs: number; calls: BothSides | null }> {
  const label = `calls-only-${latency}`;
  const timesFile = timesFileFor(dir, label, latency);
  const sandbox = await startSandboxProcess(sandboxConfig(dir, label, latency), [], timesFile);
  const client = new PayoutClient({
    baseUrl: sandbox.url, credentials: { apiKey: sandbox.key, apiSecret: sandbox.secret },
    timeoutMs: 10_000, retry: { baseMs: 50, capMs: 1000, attempts: 5 }, maxAnswerBytes: 1024 * 1024, connections: concurrency,
  });
  const calls = recordCalls(client);
  const stopTurns = loopTurns();
  let measured: { rate: number; callMs: number; loopTurnMs: number };
  let sandboxCalls: CallSpread | null = null;
  try {
    const rate = await inParallel(requests.length, async (index) => {
      const created = await client.createTransaction(requests[index] as PayoutRequest);
      const { input_amount_in_cents: amount, input_currency: currency } = created;
      if (amount === null || currency === null) throw new Error(`transaction ${created.id} came back without its input amount`);
      await client.fundTransaction(created.id, { input_amount_in_cents: amount, input_currency: currency });
    });
    measured = { rate, callMs: medianMs(calls), loopTurnMs: stopTurns() };
  } finally {
    await client.close();
    sandboxCalls = await sandbox.stopTimed();
  }
  return { ...measured, calls: bothSides(calls, sandboxCalls) };
}

/** Rows/s (two calls each) of a plain Node server that only waits L, answering a plain undici pool: this machine's floor. */
async function plainFloor(rowCount: number): Promise<number> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"x"}'), latencyMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: concurrency });
  const call = async (): Promise<void> => {
    const answer = await pool.request({ path: '/', method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    await answer.body.json();
  };
  try {
    return await inParallel(rowCount, async () => {
      await call();
      await call();
    });
  } finally {
    await pool.close();
    server.close();
  }
}

/** The first `count` valid requests of the generated batch. */
async function requestsOf(file: string, count: number): Promise<PayoutRequest[]> {
  const batch = configSchema.parse({}).batch;
  const requests: PayoutRequest[] = [];
  await validateFile(file, { reader: readerOptions(batch), rules: ruleOptions(batch, systemClock), maxReportedIssues: 1 }, {
    row(checked) {
      if (checked.valid && requests.length < count) requests.push(checked.request());
    },
  });
  return requests;
}

const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-submit-'));
try {
  await generateBatch(join(dir, 'batch.csv'), rows);
  const bound = concurrency / (2 * (latencyMs / 1000));
  // Each measured in rounds, the two alternating, and the median round quoted: this machine drifts by a fifth from one
  // run to the next.
  const slowRounds: Awaited<ReturnType<typeof submitOnce>>[] = [];
  const fastRounds: typeof slowRounds = [];
  for (let round = 1; round <= rounds; round++) {
    slowRounds.push(await submitOnce(dir, `latency-${round}`, latencyMs));
    fastRounds.push(await submitOnce(dir, `no-latency-${round}`, 0));
  }
  const slow = medianRound(slowRounds);
  const fast = medianRound(fastRounds);
  const profiledRun = await submitOnce(dir, 'no-latency-profiled', 0, true);
  // Read before the measurements below, which hold their requests in memory.
  const rss = peakRssMb(process.pid);
  const requests = await requestsOf(join(dir, 'batch.csv'), Math.min(rows, 5_000));
  const ceiling = await callsOnly(dir, requests, latencyMs);
  // The same with no added latency: what the sandbox and the client allow this machine before anything is stored.
  const fastCeiling = await callsOnly(dir, requests, 0);
  const floor = await plainFloor(Math.min(rows, 5_000));
  const met = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
  console.log(`bench:submit  ${rows} generated rows (every hundredth invalid, skipped), concurrency ${concurrency}, sandbox in its own process`);
  console.log(`  with ${latencyMs} ms latency per call  ${slow.rate.toFixed(0).padStart(6)} rows/s  (${slow.seconds.toFixed(1)} s; a call's median ${slow.callMs.toFixed(1)} ms${spread(slowRounds, (rate) => rate.toFixed(0))})`);
  // Every slot is busy while sending, so a row holds one for C/rate; what its calls do not take is its commits and its
  // waits for the event loop (the batch's first and last moments, when slots stand empty, count here too).
  const slotMs = (concurrency / slow.rate) * 1000;
  console.log(`  a row in its slot              ${slotMs.toFixed(1).padStart(6)} ms: its calls ${slow.callsPerRowMs.toFixed(1)} ms, the rest (commits, waits for the event loop) ${(slotMs - slow.callsPerRowMs).toFixed(1)} ms; 0.9 of the bound needs ${((concurrency / (0.9 * bound)) * 1000).toFixed(1)} ms`);
  console.log(`  paybatch's event loop          ${slow.loopTurnMs.toFixed(2).padStart(6)} ms between the turns of a 1 ms timer, on average while sending (idle, about 1.1)`);
  // What the sandbox's latency does not hold: the way there and back, and each side's event loop before it reads.
  const callTimes = (calls: BothSides | null): string => (calls
    ? `as paybatch timed it ${spreadText(calls.paybatch)}; as the sandbox did, from the request's arrival to its answer sent, ${spreadText(calls.sandbox)}`
    : 'not timed');
  console.log(`  a call                         ${callTimes(slow.calls)}`);
  console.log(`  bound C/(2L)                   ${bound.toFixed(0).padStart(6)} rows/s`);
  console.log(`  ratio to the bound             ${(slow.rate / bound).toFixed(2)}   (goal: at least 0.90: ${met(slow.rate / bound >= 0.9)}${spread(slowRounds, (rate) => (rate / bound).toFixed(2))})`);
  console.log(`  what this machine allows at ${latencyMs} ms, C ${concurrency}:`);
  console.log(`    the calls alone, nothing stored  ${ceiling.rate.toFixed(0).padStart(6)} rows/s  (${(ceiling.rate / bound).toFixed(2)} of the bound, a call's median ${ceiling.callMs.toFixed(1)} ms, the event loop's turns ${ceiling.loopTurnMs.toFixed(2)} ms; the engine at ${(slow.rate / ceiling.rate).toFixed(2)} of it)`);
  console.log(`      a call                         ${callTimes(ceiling.calls)}`);
  console.log(`    a plain Node server and client   ${floor.toFixed(0).padStart(6)} rows/s  (${(floor / bound).toFixed(2)} of the bound)`);
  console.log(`  with no added latency          ${fast.rate.toFixed(0).padStart(6)} rows/s  (${fast.seconds.toFixed(1)} s; goal: at least 2000: ${met(fast.rate >= 2000)}${spread(fastRounds, (rate) => rate.toFixed(0))})`);
  console.log(`    the calls alone, nothing stored  ${fastCeiling.rate.toFixed(0).padStart(6)} rows/s  (the sandbox and the client on this machine; the engine at ${(fast.rate / fastCeiling.rate).toFixed(2)} of it)`);
  console.log(`  paybatch's CPU per row         ${fast.cpuMicros.toFixed(0).padStart(6)} µs  (goal: at most ${CPU_GOAL_MICROS}, issue 42: ${met(fast.cpuMicros <= CPU_GOAL_MICROS)}; no added latency; by part, from a profiled run at ${profiledRun.rate.toFixed(0)} rows/s:)`);
  for (const [part, micros] of [...(profiledRun.parts as Map<string, number>)].sort((a, b) => b[1] - a[1])) console.log(`    ${part.padEnd(40)} ${micros.toFixed(0).padStart(5)} µs`);
  // Both processes share this machine's cores: their CPU per row together bounds the rate, however the work is spread.
  const bothMicros = fast.cpuMicros + fast.sandboxCpuMicros;
  console.log(`  the sandbox's CPU per row       ${fast.sandboxCpuMicros.toFixed(0).padStart(5)} µs  (the same run; ${(fast.sandboxCpuMicros / 2).toFixed(0)} µs a call)`);
  console.log(`  the two together               ${bothMicros.toFixed(0).padStart(6)} µs a row: ${availableParallelism()} cores allow at most ${((availableParallelism() * 1e6) / bothMicros).toFixed(0)} rows/s, each process alone at most ${(1e6 / Math.max(fast.cpuMicros, fast.sandboxCpuMicros)).toFixed(0)}`);
  // Not `run`'s figure (bench:scale measures that): this process ran every round's engine and store one after another, the last under the CPU profiler.
  console.log(`  peak RSS of this process       ${rss} MB  (${rounds * 2 + 1} engine runs in turn, the last profiled; no goal here: \`run\` and \`watch\` are measured by bench:scale)`);
  const rateMet = rateLimit === null ? true : await rateLimitedRun(dir, rateLimit);
  if (slow.rate / bound < 0.9 || fast.rate < 2000 || fast.cpuMicros > CPU_GOAL_MICROS || !rateMet) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
