/**
 * Which database paybatch keeps its state in: PostgreSQL when store.url (or
 * PAYBATCH_DATABASE_URL) is set, several workers sharing it; otherwise SQLite
 * in the workspace, the embedded default.
 */
import type { StoreConfig } from '../config/config.js';
import type { Workspace } from '../workspace/workspace.js';
import { redactUrl } from './database-url.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { SharedWorkStore, Store } from './port.js';

export interface OpenedStore {
  store: Store;
  /** The shared database's claims and leases; null for SQLite (one process per workspace, by its lease). */
  shared: SharedWorkStore | null;
  /** Where the state is, for people (a PostgreSQL URL without its password). */
  describe: string;
}

export async function openStore(config: StoreConfig, workspace: Workspace): Promise<OpenedStore> {
  if (config.url) {
    // Loaded only when configured: a SQLite workspace never holds the PostgreSQL driver in memory.
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    const store = await PostgresStore.open(config.url, { max: config.pool_size, preparedStatements: config.prepared_statements });
    return { store, shared: store, describe: `PostgreSQL ${redactUrl(config.url)}` };
  }
  return { store: SqliteStore.open(workspace.database, { checkpointThreadGroupsPerSecond: config.checkpoint_thread_groups_per_second }), shared: null, describe: `SQLite ${workspace.database}` };
}
