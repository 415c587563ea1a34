/**
 * bench:console: the console and the audit trail at a million rows.
 *
 * Builds a workspace whose database holds one settled batch of BENCH_ROWS rows
 * (default 1,000,000) received today and its audit trail, three entries a row
 * (bench/console-db.ts). Then, each against its goal:
 * - `paybatch audit verify` of the whole trail (the built binary, a child
 *   process): at least 500,000 entries a second, in constant memory (its peak
 *   RSS, under 150 MB asked);
 * - every console page (the real server, signed in as its tests do): the first
 *   view and the slowest of three more, within 300 ms each; the batch's view
 *   (its rows counted by state and reason) is made first, as settling makes it;
 * - the audit page again after 10,000 entries more were appended (the kept
 *   verification extended by the tail only);
 * - `paybatch report --date` for that day (run before the pages, so that the
 *   reconciliation page has its report): within 30 s and under 150 MB.
 * Exits 1 when a goal is missed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { issueCode } from '../src/console/auth.js';
import { startConsole } from '../src/console/server.js';
import { batchView } from '../src/engine/batch-view.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { openWorkspace } from '../src/workspace/workspace.js';
import type { BuiltTrail } from './console-db.js';
import { appendEntries, buildConsoleDatabase } from './console-db.js';

const bin = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const rows = Number(process.env.BENCH_ROWS ?? 1_000_000);
/** BENCH_ONLY=verify: only `audit verify`, BENCH_VERIFY_RUNS times (default 1), with its CPU time; not the report or the pages. */
const verifyOnly = process.env.BENCH_ONLY === 'verify';
const verifyRuns = Number(process.env.BENCH_VERIFY_RUNS ?? 1);
const PAGE_MS = 300;

let failed = false;
const goal = (ok: boolean): string => {
  if (!ok) failed = true;
  return ok ? 'met' : 'NOT MET';
};

const vmHwmMb = (pid: number): number => {
  try {
    return Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
  } catch {
    return 0;
  }
};

/** Prints the process's CPU time (every thread's, user and system) as it exits: a child's rusage is not Node's to read. */
const CPU_AT_EXIT = `data:text/javascript,process.on('exit',()=>{const u=process.cpuUsage();process.stderr.write('\\ncpu-us '+(u.user+u.system)+'\\n')})`;

/** Runs the built binary to its end: its wall time, its CPU time, its peak RSS sampled every 20 ms, its exit code and output. */
function runPaybatch(args: string[], home: string): Promise<{ seconds: number; cpuSeconds: number; peakMb: number; exit: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', CPU_AT_EXIT, bin, ...args, '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] });
  const started = performance.now();
  let peakMb = 0;
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const sample = setInterval(() => { peakMb = Math.max(peakMb, vmHwmMb(child.pid as number)); }, 20);
  return new Promise((resolve) => {
    child.on('close', (exit) => {
      clearInterval(sample);
      const cpuSeconds = Number(/\ncpu-us (\d+)\n/.exec(out)?.[1] ?? Number.NaN) / 1e6;
      resolve({ seconds: (performance.now() - started) / 1000, cpuSeconds, peakMb, exit, out: out.replace(/\ncpu-us \d+\n/, '') });
    });
  });
}

/** `audit verify` of the whole trail, `runs` times: wall and CPU time, entries a second of each, peak RSS. */
async function timeVerify(home: string, entries: number, runs: number): Promise<void> {
  for (let run = 0; run < runs; run += 1) {
    const verify = await runPaybatch(['audit', 'verify'], home);
    const rate = entries / verify.seconds;
    console.log(`  audit verify                  ${verify.seconds.toFixed(2)} s, ${rate.toFixed(0)} entries/s  (goal: at least 500,000/s: ${goal(rate >= 500_000 && verify.exit === 0)}); peak RSS ${verify.peakMb} MB  (goal: under 150 MB: ${goal(verify.peakMb < 150)}); CPU ${verify.cpuSeconds.toFixed(2)} s, ${(entries / verify.cpuSeconds).toFixed(0)} entries a CPU-second; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    if (verify.exit !== 0) process.stderr.write(verify.out.slice(-2000));
  }
}

/** A signed-in browser: the session cookie from a sign-in code, as the console's tests sign in. */
class Browser {
  private cookies = new Map<string, string>();
  constructor(private readonly base: string) {}

  async get(path: string, form?: Record<string, string>): Promise<{ status: number; text: string; ms: number }> {
    const started = performance.now();
    const response = await fetch(`${this.base}${path}`, {
      method: form ? 'POST' : 'GET', redirect: 'manual',
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const text = await response.text();
    const ms = performance.now() - started;
    for (const cookie of response.headers.getSetCookie()) {
      const [name, ...value] = ((cookie.split(';')[0] ?? '')).split('=');
      this.cookies.set(name as string, value.join('='));
    }
    return { status: response.status, text, ms };
  }

  async signIn(name: string, code: string): Promise<void> {
    const login = await this.get('/login');
    const token = /name="_csrf" value="([^"]+)"/.exec(login.text)?.[1] ?? '';
    const answer = await this.get('/login', { _csrf: token, name, code });
    if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`);
  }
}

/** Each page viewed four times: the first view, and the slowest of the three after it. */
async function timePages(browser: Browser, pages: readonly string[]): Promise<void> {
  for (const path of pages) {
    const first = await browser.get(path);
    if (first.status !== 200) throw new Error(`${path} answered ${first.status}`);
    let slowest = 0;
    for (let i = 0; i < 3; i += 1) slowest = Math.max(slowest, (await browser.get(path)).ms);
    const worst = Math.max(first.ms, slowest);
    console.log(`  ${path.padEnd(44)} first ${first.ms.toFixed(0).padStart(6)} ms, then at most ${slowest.toFixed(0).padStart(6)} ms  (goal: within ${PAGE_MS} ms: ${goal(worst <= PAGE_MS)})`);
  }
}

const day = new Date().toISOString().slice(0, 10);
/** `report --date` for the day, then every console page, then /audit again after 10,000 more entries. */
async function reportAndPages(home: string, workspace: Workspace, built: BuiltTrail): Promise<void> {
  const report = await runPaybatch(['report', '--date', day], home);
  console.log(`  report --date ${day}      ${report.seconds.toFixed(1)} s  (goal: within 30 s: ${goal(report.seconds <= 30)}); peak RSS ${report.peakMb} MB  (goal: under 150 MB: ${goal(report.peakMb < 150)}); exit ${report.exit}`);
  if (!/reconciliation \d{4}-\d\d-\d\d/.test(report.out)) {
    failed = true;
    process.stderr.write(report.out.slice(-2000));
  }
  const config = loadConfig({ home, env: {} });
  const store = SqliteStore.open(workspace.database);
  // The batch was written settled, not settled by the engine: its view is made here as settling makes it (settle.ts).
  const viewStarted = performance.now();
  const record = await store.batch(built.batch);
  if (record) await batchView(store, systemClock, record);
  console.log(`  the batch's view, made as it settles: ${((performance.now() - viewStarted) / 1000).toFixed(1)} s (settling's work, before any page)`);
  const server = await startConsole({ store, config, clock: systemClock, workspace, log: () => {}, actions: null }, { host: '127.0.0.1', port: 0 });
  try {
    const browser = new Browser(server.url);
    await browser.signIn('ada', (await issueCode(store, 'ada', systemClock, 60_000)).code);
    const b = built.batch;
    const middle = Math.floor(built.entries / 2);
    await timePages(browser, ['/', `/batches/${b}`, `/batches/${b}?after=${Math.floor(rows / 2)}`, `/batches/${b}?state=failed`, `/batches/${b}?reason=returned_by_bank`,
      '/attention', '/approvals', '/reconciliation', '/audit', `/audit?before=${middle}`, '/audit?action=fund_requested', `/audit?batch=${b}`, `/audit?batch=${b}&before=${middle}`]);
    appendEntries(workspace.database, 10_000, `${day}T13:00:00.000Z`);
    console.log('  10,000 entries appended since:');
    await timePages(browser, ['/audit']);
  } finally {
    await server.close();
    await store.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-console-'));
try {
  const home = join(dir, 'ws');
  const workspace = openWorkspace(home);
  writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ console: { people: { ada: { role: 'viewer' } } } }));
  const buildStarted = performance.now();
  const built = await buildConsoleDatabase(workspace.database, rows, day);
  console.log(`bench:console  ${rows} rows of one settled batch, ${built.entries} audit entries; built in ${((performance.now() - buildStarted) / 1000).toFixed(1)} s`);

  await timeVerify(home, built.entries, verifyRuns);

  if (!verifyOnly) await reportAndPages(home, workspace, built);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
