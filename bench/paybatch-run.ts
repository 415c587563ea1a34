/**
 * `paybatch` run as a user runs it, for the benchmarks that measure whole commands (bench:scale): a child process on a
 * workspace of its own, its peak RSS and write-ahead log sampled, killed with SIGKILL when the benchmark says; a proxy
 * in front of the sandbox that times the first calls at the service; the rows' figures read from the database.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { SandboxProcess } from './sandbox-process.js';

const bin = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
export const MB = 1024 * 1024;

export interface Watched {
  /** Peak RSS (VmHWM) in MB, read just before the process ended. */
  peakMb: number;
  /** ms from start to the line matching `mark`, when seen. */
  markedAtMs: number | null;
  /** Peak RSS (VmHWM) in MB up to the line matching `mark`: an intake's own peak. */
  peakAtMarkMb: number | null;
  /** The largest WAL seen while it ran, in bytes. */
  walMax: number;
  exit: number | null;
}

export const vmHwmMb = (pid: number): number => {
  try {
    return Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
  } catch {
    return 0;
  }
};

export const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : 0);

export interface RunOptions {
  /** A line of standard error that `killAfterMs` counts from. */
  mark?: RegExp;
  killAfterMs?: number;
  /** ms from the start after which it is killed. */
  killAtMs?: number;
  /** Asked four times a second: it is killed once this says so. */
  killWhen?: () => boolean;
  /** Called just before the process is started (after the disk was synced): where a time to the first call starts. */
  starting?: () => void;
}

/**
 * Runs paybatch with `args` on the workspace `home`, sampling its peak RSS and
 * its WAL. It is killed (SIGKILL) `killAfterMs` after `mark` is printed, when
 * given; else it runs to its end.
 */
export function runPaybatch(args: string[], home: string, options: RunOptions): Promise<Watched> {
  // What the benchmark wrote before (the files it made and copied, an earlier run's database) is put on disk first:
  // else the disk writes it back while paybatch is measured (a million-row intake right after its file was copied in:
  // 35.8 s; with the copy on disk: 27.3 s).
  spawnSync('sync');
  options.starting?.();
  const child = spawn(process.execPath, [bin, ...args, '--home', home], { stdio: ['ignore', 'ignore', 'pipe'] });
  const started = performance.now();
  const watched: Watched = { peakMb: 0, markedAtMs: null, peakAtMarkMb: null, walMax: 0, exit: null };
  const wal = join(home, 'paybatch.db-wal');
  const sample = setInterval(() => {
    watched.peakMb = Math.max(watched.peakMb, vmHwmMb(child.pid as number));
    watched.walMax = Math.max(watched.walMax, sizeOf(wal));
  }, 100);
  const kill = (): void => {
    watched.peakMb = Math.max(watched.peakMb, vmHwmMb(child.pid as number));
    child.kill('SIGKILL');
  };
  if (options.killAtMs !== undefined) setTimeout(kill, options.killAtMs);
  const until = options.killWhen && setInterval(() => {
    if ((options.killWhen as () => boolean)()) kill();
  }, 250);
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    if (options.mark && watched.markedAtMs === null && options.mark.test(err)) {
      watched.markedAtMs = performance.now() - started;
      watched.peakAtMarkMb = vmHwmMb(child.pid as number);
      if (options.killAfterMs !== undefined) setTimeout(kill, options.killAfterMs);
    }
  });
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearInterval(sample);
      clearInterval(until);
      watched.exit = code;
      watched.walMax = Math.max(watched.walMax, sizeOf(wal));
      if (code !== 0 && code !== null) process.stderr.write(err.slice(-2000));
      resolve(watched);
    });
  });
}

/** A forwarding proxy in front of the sandbox, for what a benchmark times at the service's door. */
export interface CallProxy {
  url: string;
  /** Starts counting again: the first call and the first create from now on. */
  arm(): void;
  /** ms from `arm()` to the first call (a corridor lookup aside), null before one came. */
  firstCallAt(): number | null;
  /** ms from `arm()` to the first create (POST /transactions), null before one came. */
  firstCreateAt(): number | null;
  /** Creates that came through since the proxy started. */
  creates(): number;
  close(): void;
}

const isCreate = (method: string | undefined, url: string | undefined): boolean => method === 'POST' && /\/transactions(\?|$)/.test(url ?? '');

/** Starts a proxy in front of `target` (the sandbox's base URL); its `url` is the base URL paybatch is given. */
export async function callProxy(target: string): Promise<CallProxy> {
  const upstream = new URL(target);
  let armedAt: number | null = null;
  let first: number | null = null;
  let firstCreate: number | null = null;
  let creates = 0;
  const server = createServer((req, res) => {
    const now = performance.now();
    if (armedAt !== null && first === null && !req.url?.includes('/corridors')) first = now;
    if (isCreate(req.method, req.url)) {
      creates += 1;
      if (armedAt !== null && firstCreate === null) firstCreate = now;
    }
    const forward = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const since = (at: number | null): number | null => (at === null || armedAt === null ? null : at - armedAt);
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    arm: () => {
      armedAt = performance.now();
      first = null;
      firstCreate = null;
    },
    firstCallAt: () => since(first),
    firstCreateAt: () => since(firstCreate),
    creates: () => creates,
    close: () => server.close(),
  };
}

export function workspace(dir: string, name: string, file: string, baseUrl: string, sandbox: SandboxProcess, extra: Record<string, unknown> = {}): string {
  const home = join(dir, name);
  mkdirSync(join(home, 'inbox'), { recursive: true });
  writeFileSync(join(dir, 'secret'), sandbox.secret);
  writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
    service: { base_url: baseUrl, api_key: sandbox.key, api_secret_file: join(dir, 'secret') },
    batch: { invalid_rows: 'skip_invalid' },
    engine: { concurrency: 32 },
    ...extra,
  }));
  copyFileSync(file, join(home, 'inbox', 'batch.csv'));
  writeFileSync(join(home, 'inbox', 'batch.csv.done'), '');
  return home;
}

export const NO_ROWS = { rows: 0, sent: 0, funded: 0, ready: 0, dbBytes: 0 };

export function rowFigures(home: string): typeof NO_ROWS {
  if (!existsSync(join(home, 'paybatch.db'))) return NO_ROWS;
  const db = new Database(join(home, 'paybatch.db'), { readonly: true });
  try {
    // The file is made a moment before its tables.
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'rows'").get() === undefined) return NO_ROWS;
    const counted = db.prepare("SELECT COUNT(*) AS rows, COUNT(transaction_id) AS sent, COUNT(funded_at) AS funded, COUNT(*) FILTER (WHERE phase = 'ready') AS ready FROM rows").get() as { rows: number; sent: number; funded: number; ready: number };
    return { ...counted, dbBytes: sizeOf(join(home, 'paybatch.db')) };
  } finally {
    db.close();
  }
}

/** The database's bytes by what holds them (SQLite's dbstat): the rows with their indexes, the audit trail, the rest. */
export function databaseParts(home: string): { rows: number; audit: number; rest: number } {
  const db = new Database(join(home, 'paybatch.db'), { readonly: true });
  try {
    const parts = { rows: 0, audit: 0, rest: 0 };
    for (const { name, bytes } of db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all() as { name: string; bytes: number }[]) {
      if (name === 'rows' || name.startsWith('rows_') || name.startsWith('row_recipients')) parts.rows += bytes;
      else if (name.startsWith('audit_log')) parts.audit += bytes;
      else parts.rest += bytes;
    }
    return parts;
  } finally {
    db.close();
  }
}
