/**
 * Process-wide settings, set once by the CLI as a command starts, from its
 * configuration (not by the modules that happen to need them): how V8 sizes the
 * heap (the `process` keys, see heap.ts), and where SQLite keeps its own
 * temporary files. Worker threads are given the heap's settings by who starts
 * them (heapSettings() in their workerData); sending grows the young generation
 * through roomForSending.
 */
import { dirname, resolve } from 'node:path';
import type { Config, StoreConfig } from '../config/config.js';
import { keepHeapNearLive } from '../heap.js';
import type { Workspace } from '../workspace/workspace.js';

/**
 * Everything process-wide, from the configuration the command loaded: called as soon as it is loaded, before the
 * store is opened and before a batch is read (main.ts held the heap as the defaults say until then). Not for the
 * sandbox command, which reads no configuration (see main.ts).
 */
export function tuneProcess(config: Pick<Config, 'process' | 'store'>, workspace: Workspace, env: NodeJS.ProcessEnv = process.env): void {
  tuneHeap(config);
  keepSqliteTemporaryFilesBeside(config.store, workspace, env);
}

/** The heap alone, for a command that opens no store before it reads a file (validate). */
export function tuneHeap(config: Pick<Config, 'process'>): void {
  keepHeapNearLive(config.process);
}

/**
 * SQLite's own temporary files (large sorts, statement journals) go beside the workspace's database, not in the
 * system's temporary folder: the disk that holds the database is the one paybatch needs anyway, and a full or missing
 * temporary folder then stops nothing. SQLite reads the folder once, when it first needs one, so this is set before
 * the store is opened; a folder the user set is kept. With PostgreSQL there is no such database.
 */
export function keepSqliteTemporaryFilesBeside(store: StoreConfig, workspace: Workspace, env: NodeJS.ProcessEnv = process.env): void {
  if (store.url) return;
  env.SQLITE_TMPDIR ??= dirname(resolve(workspace.database));
}
