/** Runs the watch daemon in-process against a fast sandbox over HTTP, in a fresh workspace. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PayoutClient } from '../../src/api/client.js';
import { requestSignature } from '../../src/api/signing.js';
import type { Clock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { SandboxConfigInput } from '../../src/sandbox/config.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { DaemonStarted } from '../../src/watch/daemon.js';
import { Daemon } from '../../src/watch/daemon.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { FAST_ENGINE, FAST_SANDBOX } from './engine.js';
import { ManualClock } from '../../src/clock.js';

export interface DaemonContext {
  dir: string;
  /** The daemon's time: the test's clock, else a ManualClock moved on by the daemon's pauses and by the test (advanceClock). */
  clock: Clock;
  /** Moves the helper's clock on by `ms` at once (a test that gave its own clock moves that one). */
  advanceClock(ms: number): void;
  workspace: Workspace;
  store: SqliteStore;
  sandbox: RunningSandbox;
  daemon: Daemon;
  started: DaemonStarted;
  logs: { event: string; fields: Record<string, unknown> }[];
  /** Posts a body to the daemon's receiver, signed as the service would sign it unless told otherwise. */
  deliver(body: string, options?: { nonce?: string; key?: string; secret?: string; omit?: string[] }): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/**
 * `clock`: the daemon's time (a ManualClock by default, see DaemonContext.clock). `wrapStore`: what the daemon is given
 * instead of the store itself (a test's proxy, to hold a step); ctx.store stays the store. `front`: given the sandbox's
 * URL, the URL the daemon calls instead (a test's tap or proxy in front of it). `onLog`: told of each event as it is
 * logged, at that moment (to act on the daemon right then).
 */
export async function daemonContext(options: {
  sandbox?: SandboxConfigInput; config?: Record<string, unknown>; clock?: Clock; wrapStore?: (store: SqliteStore) => SqliteStore;
  front?: (sandboxUrl: string) => Promise<string>; onLog?: (event: string, fields: Record<string, unknown>) => void;
} = {}): Promise<DaemonContext> {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-watch-'));
  const workspace = openWorkspace(join(dir, 'ws'));
  const store = SqliteStore.open(workspace.database);
  const sandbox = await startSandbox({ config: { ...FAST_SANDBOX, ...options.sandbox } });
  const credentials = { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret };
  const baseUrl = options.front ? await options.front(sandbox.url) : sandbox.url;
  const client = new PayoutClient({ baseUrl, credentials, timeoutMs: 2000, retry: { baseMs: 5, capMs: 50, attempts: 8 }, maxAnswerBytes: 1024 * 1024 });
  const extra = options.config ?? {};
  const config = configSchema.parse({
    ...extra,
    engine: { ...FAST_ENGINE, ...(extra.engine as object) },
    watch: { stable_ms: 150, results_every_ms: 500, ...(extra.watch as object), listen: { port: 0 } },
  });
  const logs: DaemonContext['logs'] = [];
  const own = options.clock === undefined ? new ManualClock(Date.now()) : null;
  const clock = options.clock ?? (own as ManualClock);
  // The helper's own clock moves only when the daemon's loop pauses (by the pause's length) or the test moves it.
  const daemon = new Daemon({
    workspace, store: options.wrapStore ? options.wrapStore(store) : store, client, credentials, config, clock, tickMs: 20,
    log: (event, fields) => {
      logs.push({ event, fields });
      options.onLog?.(event, fields);
    },
    paused: own ? (ms) => own.advance(ms) : undefined,
  });
  const started = await daemon.start();
  return {
    dir, clock, workspace, store, sandbox, daemon, started, logs,
    advanceClock(ms) {
      if (!own) throw new Error('this test gave the daemon its own clock: move that one');
      own.advance(ms);
    },
    async deliver(body, o = {}) {
      const nonce = o.nonce ?? crypto.randomUUID();
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'authorization-key': o.key ?? sandbox.apiKey,
        'authorization-nonce': nonce,
        'authorization-signature': requestSignature(o.secret ?? sandbox.apiSecret, nonce, 'POST', started.webhookUrl, body),
      };
      for (const name of o.omit ?? []) delete headers[name];
      const response = await fetch(started.webhookUrl, { method: 'POST', headers, body });
      return { status: response.status, text: await response.text() };
    },
    async stop() {
      await daemon.stop(5000);
      await client.close();
      await store.close();
      await sandbox.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns a truthy value, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'the condition'): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
