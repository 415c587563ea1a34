/**
 * The store for commands that only read it (status, audit): PostgreSQL when
 * configured (any worker's machine sees the same state), else the workspace's
 * SQLite file, which must exist.
 */
import { existsSync } from 'node:fs';
import type { Config } from '../config/config.js';
import { loadConfig, workspaceHome } from '../config/config.js';
import { ExitCode, PaybatchError } from '../errors.js';
import { openStore } from '../store/open-store.js';
import { tuneProcess } from './process-tuning.js';
import type { SharedWorkStore, Store } from '../store/port.js';
import type { Workspace } from '../workspace/workspace.js';
import { openWorkspace } from '../workspace/workspace.js';

export async function withReadStore<T>(opts: { home?: string; config?: string }, missing: string, work: (store: Store, workspace: Workspace, shared: SharedWorkStore | null, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig({ file: opts.config, home: opts.home });
  const workspace = openWorkspace(workspaceHome(opts.home));
  if (!config.store.url && !existsSync(workspace.database)) throw new PaybatchError(`no paybatch database in ${workspace.home}: ${missing}`, ExitCode.failure);
  tuneProcess(config, workspace);
  const { store, shared } = await openStore(config.store, workspace);
  try {
    return await work(store, workspace, shared, config);
  } finally {
    await store.close();
  }
}
