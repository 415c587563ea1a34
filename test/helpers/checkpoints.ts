/** What the tests of the checkpoint thread look at and start: this process's threads, the main connection's setting, the load that starts it, child processes. */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess, SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { Checkpointer } from '../../src/store/sqlite/checkpointer.js';
import { BUSY_GROUPS_PER_SECOND } from '../../src/store/sqlite/checkpointer.js';
import type { SqliteDatabase } from '../../src/store/sqlite/database.js';

/** A module of the built store, as a string literal for a child's script (a child runs JavaScript, from dist/). */
export const builtStoreModule = (path: string): string => JSON.stringify(new URL(`../../dist/src/store/sqlite/${path}`, import.meta.url).href);

/** better-sqlite3, as a string literal for a child's script. */
export const SQLITE_MODULE = JSON.stringify(new URL('../../node_modules/better-sqlite3/lib/index.js', import.meta.url).href);

/** The threads of this process (Linux). */
export const threads = (): number => readdirSync('/proc/self/task').length;

/** The main connection's own checkpoints: every how many pages of log. */
export const autocheckpoint = (db: SqliteDatabase): number => db.pragma('wal_autocheckpoint', { simple: true }) as number;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` holds, checking every 10 ms, for at most `ms`. */
export async function until(done: () => boolean, ms = 5000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (done()) return true;
  return done();
}

/** A second of group commits as the engine makes them while sending. */
export function busySecond(checkpointer: Checkpointer, now = Date.now()): void {
  for (let i = 0; i < BUSY_GROUPS_PER_SECOND; i++) checkpointer.groupCommitted(now);
}

/** What is written to standard error from now on, until restored (nothing of it reaches the terminal meanwhile). */
export function captureStderr(): { said: string[]; restore(): void } {
  const said: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => {
    said.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  return { said, restore: () => (process.stderr.write = write) };
}

/**
 * A folder of its own for each test of the suite it is called in, holding the
 * children's `scripts` (name to text), removed after the test; returns how to
 * find the current one.
 */
export function scriptsFolderPerTest(prefix: string, scripts: Record<string, string>): () => string {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    for (const [name, text] of Object.entries(scripts)) writeFileSync(join(dir, name), text);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}

/** How a child process ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child process of the checkpoint tests, running: what it has said so far, its end, and a bounded wait for a line of it. */
export interface RunningChild {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<ChildExit>;
  /** Waits until its stdout or stderr matches `said`, for at most `ms`; fails with what it said, sooner if it ended. */
  waitFor(said: RegExp, ms: number, what: string): Promise<void>;
}

/**
 * Starts `node ...args` (a script of the test, or the built binary with its arguments), its output kept. Every
 * checkpoint test's child is started here or by `runChild`.
 */
export function startChild(args: string[], options: { env?: NodeJS.ProcessEnv } = {}): RunningChild {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let ended = false;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<ChildExit>((resolve) => child.once('close', (code, signal) => {
    ended = true;
    resolve({ code, signal });
  }));
  return {
    child, exited, stdout: () => stdout, stderr: () => stderr,
    async waitFor(said, ms, what) {
      const seen = await until(() => ended || said.test(stdout) || said.test(stderr), ms);
      if (!seen || !(said.test(stdout) || said.test(stderr))) throw new Error(`${what}: not said within ${ms} ms${ended ? ' (the child ended)' : ''}:\n${stdout.slice(-1000)}\n${stderr.slice(-2000)}`);
    },
  };
}

/** Runs `node ...args` to its end (at most `timeoutMs`), its output as text. */
export function runChild(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, args, { encoding: 'utf8', timeout: options.timeoutMs ?? 15_000, cwd: options.cwd, env: { ...process.env, ...options.env } });
}

/**
 * Runs `node ...args` to its end (killed with SIGKILL after `timeoutMs`), its output as text, without blocking this
 * process: children of tests that run at once (describe.concurrent) run at once too.
 */
export async function runChildAsync(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const running = startChild(args, options);
  const timer = setTimeout(() => running.child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
  try {
    const { code, signal } = await running.exited;
    return { status: code, signal, stdout: running.stdout(), stderr: running.stderr() };
  } finally {
    clearTimeout(timer);
  }
}
