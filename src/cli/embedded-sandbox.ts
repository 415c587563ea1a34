/**
 * The workspace's embedded sandbox: with no service configured, every command
 * of one workspace (run, watch, status, report, cancel, the demo) talks to the
 * same simulated service. Its state is kept in HOME/sandbox/sandbox.db, so a
 * payout created by one command goes on by wall-clock time and is found by the
 * next, and two commands at once share it (WAL; see sandbox/store.ts). Its key
 * and secret are made once per workspace and kept beside it, readable by the
 * owner only: a webhook signed by one process verifies in another.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { EngineConfig } from '../config/config.js';
import { configSchema } from '../config/config.js';
import { ConfigError } from '../errors.js';
import type { RunningSandbox } from '../sandbox/start.js';
import { UnsafePath } from '../workspace/safe-files.js';

export interface EmbeddedSandboxFiles {
  folder: string;
  /** The sandbox's SQLite file (what `paybatch sandbox --db` takes). */
  database: string;
  /** Its API key and secret, JSON, mode 0600. */
  credentials: string;
}

export function embeddedSandboxFiles(home: string): EmbeddedSandboxFiles {
  const folder = join(home, 'sandbox');
  return { folder, database: join(folder, 'sandbox.db'), credentials: join(folder, 'credentials.json') };
}

interface Credentials {
  api_key: string;
  api_secret: string;
}

function readCredentials(file: string): Credentials {
  // Kept to its owner whatever a copy or an editor left it at: the secret signs the sandbox's webhooks.
  chmodSync(file, 0o600);
  let parsed: Partial<Credentials> = {};
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Credentials>;
  } catch (error) {
    // Not JSON: told below as a file that does not hold them. Not readable (missing among them): as it is.
    if ((error as NodeJS.ErrnoException).code !== undefined) throw error;
  }
  if (typeof parsed?.api_key !== 'string' || typeof parsed.api_secret !== 'string' || parsed.api_secret.length < 8) {
    throw new ConfigError(`${file} does not hold the embedded sandbox's api_key and api_secret: delete it and the sandbox folder to start the embedded sandbox afresh`);
  }
  return { api_key: parsed.api_key, api_secret: parsed.api_secret };
}

/**
 * The folder made (0700, never through a link), the database file 0600, and
 * the workspace's key and secret, made on first use. Written whole under another name, then linked in:
 * two commands starting at once both end up with the one that was linked first.
 */
export function embeddedSandboxCredentials(files: EmbeddedSandboxFiles): Credentials {
  mkdirSync(files.folder, { recursive: true, mode: 0o700 });
  if (lstatSync(files.folder).isSymbolicLink()) throw new UnsafePath(`${files.folder} is a symbolic link: refused, the embedded sandbox keeps its state in a plain folder`);
  chmodSync(files.folder, 0o700);
  // Its owner's alone, as the workspace's own database: it holds recipients' accounts (SQLite gives its -wal and -shm the same).
  closeSync(openSync(files.database, 'a', 0o600));
  chmodSync(files.database, 0o600);
  try {
    return readCredentials(files.credentials);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const made: Credentials = { api_key: `sandbox-${randomBytes(4).toString('hex')}`, api_secret: randomBytes(32).toString('base64url') };
  const draft = `${files.credentials}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${JSON.stringify(made)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, files.credentials);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  return readCredentials(files.credentials);
}

/**
 * [D17] How paybatch reads the embedded sandbox when engine.polling is left at
 * its defaults (one read in ten minutes, for a real service that sends
 * webhooks): the sandbox pays in seconds (slow payouts in under a minute), so a
 * first `run` sees its rows final within its --wait.
 */
export const EMBEDDED_POLLING: EngineConfig['polling'] = { first_window_ms: 120_000, first_window_reads: 60, later_interval_ms: 30_000, reads_per_second: 100 };

const DEFAULT_POLLING = configSchema.parse({}).engine.polling;

/** The polling for the embedded sandbox: the configured one when set, else EMBEDDED_POLLING. */
export function embeddedPolling(configured: EngineConfig['polling']): { polling: EngineConfig['polling']; chosen: boolean } {
  return isDeepStrictEqual(configured, DEFAULT_POLLING) ? { polling: EMBEDDED_POLLING, chosen: true } : { polling: configured, chosen: false };
}

/** One line for people: how the embedded sandbox is read. */
export function describePolling(polling: EngineConfig['polling'], chosen: boolean): string {
  const every = Math.ceil(polling.first_window_ms / polling.first_window_reads / 1000);
  const line = `each payout is read every ${every}s for its first ${polling.first_window_ms / 60_000}m, then every ${polling.later_interval_ms / 1000}s`;
  return chosen ? `${line} (the embedded sandbox's polling; engine.polling in the configuration sets another)` : `${line} (engine.polling)`;
}

/**
 * Webhook registrations an earlier `watch` of this workspace left in its
 * sandbox, dropped when `run` or `watch` takes the workspace (its lease: no
 * other watch of it runs). Its sandbox serves this workspace alone, so they
 * can only point at a receiver that has stopped, perhaps on another port; the
 * watch starting registers its own, where a registration left in place would
 * stand in its way (held elsewhere). Returns how many were dropped.
 */
export function dropLeftWebhooks(sandbox: Pick<RunningSandbox, 'store'>): number {
  let dropped = 0;
  for (const webhook of sandbox.store.webhooks()) if (sandbox.store.deleteWebhook(webhook.id)) dropped += 1;
  return dropped;
}
