/**
 * `npm run bench:scale`: a large batch through `paybatch run`, as a user runs it:
 * a child process against the sandbox in a process of its own (no added latency,
 * payouts that end an hour later: this measures intake, sending and resuming,
 * not following). One run prints every figure with its goal:
 *
 * - peak RSS of `run` on BENCH_SMALL_ROWS rows (default 10,000, sent to the end)
 *   and on BENCH_ROWS rows (default 1,000,000: intake, then BENCH_SEND_SECONDS
 *   of sending, default 40), and their ratio (goal: under 150 MB, within 1.2×);
 * - intake of the large batch: seconds from start to accepted, and its rate
 *   against csv-parse alone on the same file (goals: under 30 s, and at least
 *   0.8 of csv-parse's rate, issue 42);
 * - resume: the large run is killed (SIGKILL) while sending, and started again;
 *   the time from that start to its first call at the service, counted by a
 *   forwarding proxy in front of the sandbox (goal: within 2 s), and to its
 *   first new create;
 * - storage: the write-ahead log's largest size while sending (goal: under
 *   64 MB), the database's size and its bytes per row (goal: at most 400);
 * - the same peak RSS for `paybatch watch` on the large batch (its intake and
 *   as long of sending, in a workspace of its own), against watch's own on the
 *   small batch (sent to the end, in a workspace of its own): the daemon holds
 *   more than `run` whatever the batch (its webhook listener, its schedule), so
 *   a batch's effect on its memory is measured against itself; the ratio to
 *   `run`'s peak on the small batch is printed too;
 * - the possible-duplicate screen of intake (issue 37) on the large batch: the
 *   same intake again with batch.duplicate_window off, right after, in a
 *   workspace of its own; the difference in seconds to accepted and in peak
 *   RSS up to acceptance is what the screen costs. BENCH_SCREEN_ONLY=1 runs
 *   only these two intakes (each killed once accepted).
 *
 * BENCH_RESUME_ONLY=1 runs only the resume with many payouts in flight: a
 * 300,000-row batch killed with 20,000 created, started again three times; the
 * first new create within 1 s of each start (bench/scale-resume.ts).
 *
 * BENCH_STORE=postgres runs only intake to accepted on PostgreSQL against SQLite
 * (issue 42: within 2×), BENCH_ROUNDS rounds (bench/scale-postgres.ts).
 */
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { generateBatch } from './generate-batch.js';
import type { Watched } from './paybatch-run.js';
import { MB, callProxy, databaseParts, rowFigures, runPaybatch, workspace } from './paybatch-run.js';
import type { SandboxProcess } from './sandbox-process.js';
import { startSandboxProcess } from './sandbox-process.js';
import { comparePostgresIntake } from './scale-postgres.js';
import { measureResume, resumeSettings } from './scale-resume.js';

const rows = Number(process.env.BENCH_ROWS ?? 1_000_000);
const smallRows = Number(process.env.BENCH_SMALL_ROWS ?? 10_000);
const sendSeconds = Number(process.env.BENCH_SEND_SECONDS ?? 40);
const screenOnly = process.env.BENCH_SCREEN_ONLY === '1';
const postgresOnly = process.env.BENCH_STORE === 'postgres';
const resumeOnly = process.env.BENCH_RESUME_ONLY === '1';

async function csvParseSeconds(file: string): Promise<number> {
  const started = performance.now();
  const parser = createReadStream(file, { highWaterMark: 64 * 1024 }).pipe(parse({ delimiter: ',', bom: true, trim: true, relax_quotes: true, skip_empty_lines: true, info: true }));
  for await (const _record of parser) void _record;
  return (performance.now() - started) / 1000;
}

/**
 * The duplicate screen's cost: an intake of `file` with it (`screened`, measured already) against one without it
 * (batch.duplicate_window off), run now in a workspace of its own and killed once accepted.
 */
async function screenCost(file: string, screened: Watched, baseUrl: string, sandbox: SandboxProcess): Promise<void> {
  const home = workspace(dir, 'unscreened', file, baseUrl, sandbox, { batch: { invalid_rows: 'skip_invalid', duplicate_window: 'off' } });
  const unscreened = await runPaybatch(['run', '--wait', '1h'], home, { mark: /intake accepted/, killAfterMs: 0 });
  const on = (screened.markedAtMs ?? NaN) / 1000;
  const off = (unscreened.markedAtMs ?? NaN) / 1000;
  const onMb = screened.peakAtMarkMb ?? NaN;
  const offMb = unscreened.peakAtMarkMb ?? NaN;
  console.log(`  duplicate screen, ${rows} rows  intake ${on.toFixed(1)} s with it, ${off.toFixed(1)} s without: the screen ${(on - off).toFixed(1)} s, ${((on - off) / on * 100).toFixed(0)}% of intake;`
    + ` peak RSS to accepted ${onMb} MB with it, ${offMb} MB without (${onMb - offMb >= 0 ? '+' : ''}${onMb - offMb} MB)  (goal: intake under 30 s: ${goal(on < 30)}, peak under 150 MB: ${goal(onMb < 150)})`);
  rmSync(home, { recursive: true, force: true });
}

const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-scale-'));
const sandboxConfig = join(dir, 'sandbox.json');
writeFileSync(sandboxConfig, JSON.stringify({
  balances: { USD: '900000000000000000', EUR: '900000000000000000' },
  payout: { clearing_ms: 3_600_000, delay_ms: [3_600_000, 3_600_000] },
}));
const sandbox = await startSandboxProcess(sandboxConfig);
const proxy = await callProxy(sandbox.url);
let failed = false;
const goal = (ok: boolean): string => {
  if (!ok) failed = true;
  return ok ? 'met' : 'NOT MET';
};
try {
  const smallFile = join(dir, 'small.csv');
  const largeFile = join(dir, 'large.csv');
  await generateBatch(largeFile, rows);
  if (screenOnly) {
    console.log(`bench:scale  duplicate screen only: ${rows} rows (${(statSync(largeFile).size / 1e6).toFixed(0)} MB), sandbox in its own process`);
    const screened = await runPaybatch(['run', '--wait', '1h'], workspace(dir, 'screened', largeFile, sandbox.url, sandbox), { mark: /intake accepted/, killAfterMs: 0 });
    await screenCost(largeFile, screened, sandbox.url, sandbox);
    proxy.close();
    sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(failed ? 1 : 0);
  }
  if (resumeOnly) {
    const settings = resumeSettings(process.env);
    console.log(`bench:scale  resume only: ${settings.rows} rows, killed with ${settings.inFlight} in flight, ${settings.rounds} restarts; sandbox in its own process, behind a proxy that times the first calls`);
    const met = await measureResume(dir, sandbox, proxy, settings);
    proxy.close();
    sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(met ? 0 : 1);
  }
  if (postgresOnly) {
    const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
    console.log(`bench:scale  intake on PostgreSQL against SQLite only: ${rows} rows (${(statSync(largeFile).size / 1e6).toFixed(0)} MB), ${rounds} rounds, each intake killed once accepted`);
    const met = await comparePostgresIntake(rows, rounds, async (name, url) => {
      const home = workspace(dir, name, largeFile, sandbox.url, sandbox, url === null ? {} : { store: { url } });
      const watched = await runPaybatch(['run', '--wait', '1h'], home, { mark: /intake accepted/, killAfterMs: 0 });
      rmSync(home, { recursive: true, force: true });
      return watched.markedAtMs === null ? null : watched.markedAtMs / 1000;
    });
    proxy.close();
    sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(met ? 0 : 1);
  }
  await generateBatch(smallFile, smallRows);
  console.log(`bench:scale  ${rows} rows (${(statSync(largeFile).size / 1e6).toFixed(0)} MB) and ${smallRows} rows, sandbox in its own process, no added latency, concurrency 32`);

  const smallHome = workspace(dir, 'small', smallFile, sandbox.url, sandbox);
  const smallStarted = performance.now();
  // Killed once every valid row is funded: what follows is only waiting for the payouts to end.
  const allFunded = (home: string) => (): boolean => {
    const f = rowFigures(home);
    return f.rows > 0 && f.ready === 0 && f.funded === f.sent && f.sent > 0;
  };
  const small = await runPaybatch(['run', '--wait', '1h'], smallHome, { killWhen: allFunded(smallHome) });
  const smallSeconds = (performance.now() - smallStarted) / 1000;
  const smallFigures = rowFigures(join(dir, 'small'));
  console.log(`  run, ${smallRows} rows to the end      peak RSS ${small.peakMb} MB (${smallFigures.funded} funded in ${smallSeconds.toFixed(1)} s)`);

  const largeHome = workspace(dir, 'large', largeFile, proxy.url, sandbox);
  const killed = await runPaybatch(['run', '--wait', '1h'], largeHome, { mark: /intake accepted/, killAfterMs: sendSeconds * 1000 });
  const killedFigures = rowFigures(largeHome);
  const intakeSeconds = (killed.markedAtMs ?? NaN) / 1000;
  const parseSeconds = await csvParseSeconds(largeFile);
  const sendRate = killedFigures.sent / sendSeconds;
  console.log(`  run, ${rows} rows: intake       ${intakeSeconds.toFixed(1)} s to accepted, ${(rows / intakeSeconds).toFixed(0)} rows/s; csv-parse alone ${(rows / parseSeconds).toFixed(0)} rows/s, ratio ${(parseSeconds / intakeSeconds).toFixed(2)}  (goal: under 30 s: ${goal(intakeSeconds < 30)}; at least 0.8 of csv-parse: ${goal(parseSeconds / intakeSeconds >= 0.8)})`);
  console.log(`  then ${sendSeconds} s of sending           ${killedFigures.sent} rows sent, ${sendRate.toFixed(0)} rows/s; killed with SIGKILL`);
  console.log(`  peak RSS, ${rows} rows         ${killed.peakMb} MB  (goal: under 150 MB: ${goal(killed.peakMb < 150)})`);
  console.log(`  ratio to ${smallRows} rows          ${(killed.peakMb / small.peakMb).toFixed(2)}  (goal: within 1.20: ${goal(killed.peakMb / small.peakMb <= 1.2)})`);
  console.log(`  write-ahead log, largest       ${(killed.walMax / MB).toFixed(1)} MB  (goal: under 64 MB: ${goal(killed.walMax < 64 * MB)})`);
  const bytesPerRow = killedFigures.dbBytes / killedFigures.rows;
  console.log(`  database                       ${(killedFigures.dbBytes / MB).toFixed(0)} MB, ${bytesPerRow.toFixed(0)} bytes per row  (goal: at most 400: ${goal(bytesPerRow <= 400)})`);
  // What the figure is made of: the rows as taken in, and what sending added (the trail grows with the rows sent in
  // the seconds of sending, so a faster machine sends more and shows more bytes a row).
  const parts = databaseParts(largeHome);
  console.log(`    of them                      the rows and their indexes ${(parts.rows / killedFigures.rows).toFixed(0)} bytes a row; the audit trail ${(parts.audit / killedFigures.rows).toFixed(0)} (${killedFigures.sent > 0 ? (parts.audit / killedFigures.sent).toFixed(0) : '-'} bytes for each of the ${killedFigures.sent} rows sent); the rest ${(parts.rest / killedFigures.rows).toFixed(0)}`);
  await screenCost(largeFile, killed, sandbox.url, sandbox);

  const resumed = await runPaybatch(['run', '--wait', '1h'], largeHome, { killAtMs: 10_000, starting: () => proxy.arm() });
  const firstCall = proxy.firstCallAt();
  const firstCreate = proxy.firstCreateAt();
  const resumedFigures = rowFigures(largeHome);
  console.log(`  resume after SIGKILL           first call ${firstCall === null ? 'never' : `${(firstCall / 1000).toFixed(2)} s`} after the start  (goal: within 2 s: ${goal(firstCall !== null && firstCall < 2000)}), first new create ${firstCreate === null ? 'never' : `${(firstCreate / 1000).toFixed(2)} s`}; ${resumedFigures.sent - killedFigures.sent} more sent in 10 s, peak RSS ${resumed.peakMb} MB, WAL largest ${(resumed.walMax / MB).toFixed(1)} MB`);

  // The daemon on the small batch to its end, then on the large one: a fresh workspace each, the large one's intake and
  // as long of sending, then SIGKILL.
  const daemon = { watch: { listen: { host: '127.0.0.1', port: 0 } } };
  const watchSmallHome = workspace(dir, 'watch-small', smallFile, sandbox.url, sandbox, daemon);
  const watchedSmall = await runPaybatch(['watch'], watchSmallHome, { killWhen: allFunded(watchSmallHome) });
  const watchHome = workspace(dir, 'watch', largeFile, sandbox.url, sandbox, daemon);
  const watched = await runPaybatch(['watch'], watchHome, { mark: /intake accepted/, killAfterMs: sendSeconds * 1000 });
  const watchedFigures = rowFigures(watchHome);
  console.log(`  watch, ${smallRows} rows to the end    peak RSS ${watchedSmall.peakMb} MB (${rowFigures(watchSmallHome).funded} funded)`);
  console.log(`  watch, ${rows} rows             intake ${((watched.markedAtMs ?? NaN) / 1000).toFixed(1)} s, ${watchedFigures.sent} sent in ${sendSeconds} s; peak RSS ${watched.peakMb} MB  (goal: under 150 MB: ${goal(watched.peakMb < 150)}); WAL largest ${(watched.walMax / MB).toFixed(1)} MB`);
  console.log(`  ratio to ${smallRows} rows          ${(watched.peakMb / watchedSmall.peakMb).toFixed(2)}  (goal: within 1.20: ${goal(watched.peakMb / watchedSmall.peakMb <= 1.2)}); ${(watched.peakMb / small.peakMb).toFixed(2)} of run's peak on ${smallRows} rows`);
} finally {
  proxy.close();
  sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
