/**
 * Process-wide settings, set once by the CLI as a command starts (not by the
 * modules that happen to need them): V8's heap flags are set in main.ts and
 * for sending through the engine's beforeSending hook (see heap.ts); here,
 * where SQLite keeps its own temporary files.
 */
import { dirname, resolve } from 'node:path';
import type { StoreConfig } from '../config/config.js';
import type { Workspace } from '../workspace/workspace.js';

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
