/**
 * What `run` and `cancel` both need around their work: the configuration, the
 * workspace and its lock, the store, the log and the service; always closed,
 * lock released, however the work ends.
 */
import { loadConfig, workspaceHome } from '../config/config.js';
import type { Config } from '../config/config.js';
import type { ServiceConnection } from '../config/service.js';
import { connectService } from '../config/service.js';
import { engineLog } from '../engine/log.js';
import type { PipelineLog } from '../engine/pipeline.js';
import { SqliteStore } from '../store/sqlite-store.js';
import { lockWorkspace } from '../workspace/lock.js';
import type { Workspace } from '../workspace/workspace.js';
import { openWorkspace } from '../workspace/workspace.js';

export interface EngineSession {
  config: Config;
  workspace: Workspace;
  store: SqliteStore;
  log: PipelineLog;
  connection: ServiceConnection;
}

/**
 * `exclusive` (the default) takes the workspace lock: only one process takes
 * files in and recovers interrupted work. Commands that only act on rows
 * through the store's guarded steps (cancel, webhook registration) run beside it.
 */
export async function withEngineSession<T>(opts: { home?: string; config?: string }, work: (session: EngineSession) => Promise<T>, options: { exclusive?: boolean } = {}): Promise<T> {
  const config = loadConfig({ file: opts.config, home: opts.home });
  const workspace = openWorkspace(workspaceHome(opts.home));
  const unlock = options.exclusive === false ? () => {} : lockWorkspace(workspace.home);
  const store = SqliteStore.open(workspace.database);
  const { log, close } = engineLog(workspace.home, (line) => process.stderr.write(`paybatch: ${line}\n`));
  try {
    const connection = await connectService(config.service, { sandboxLog: () => {}, log });
    process.stderr.write(`paybatch: using ${connection.describe}\n`);
    try {
      return await work({ config, workspace, store, log, connection });
    } finally {
      await connection.close();
    }
  } finally {
    close();
    await store.close();
    unlock();
  }
}
