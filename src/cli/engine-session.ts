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
import { createHash } from 'node:crypto';
import { canonicalJson } from '../audit/chain.js';
import { systemClock } from '../clock.js';
import { ExitCode } from '../errors.js';
import type { HeldWorkspace } from '../engine/workspace-lease.js';
import { holdWorkspace } from '../engine/workspace-lease.js';
import type { Workspace } from '../workspace/workspace.js';
import { openWorkspace } from '../workspace/workspace.js';

/** Stands for the service where a command needs none: using it is a bug. */
const offline: ServiceConnection = {
  get client(): never { throw new Error('this command does not talk to the service'); },
  credentials: { apiKey: '', apiSecret: '' },
  embedded: null,
  describe: 'no service',
  close: async () => {},
};

/**
 * The configuration in use joins the audit trail when it changed since it was
 * last recorded (its secret left out): who may approve, the limits, the policy.
 */
async function recordConfiguration(store: SqliteStore, config: Config): Promise<void> {
  const { approvalPolicy: _policy, ...plain } = config;
  const shown = { ...plain, service: { ...plain.service, api_secret: plain.service.api_secret ? '(set, not recorded)' : undefined } };
  const sha256 = createHash('sha256').update(canonicalJson(shown)).digest('hex');
  const last = await store.lastAudit('configuration');
  if (last && (JSON.parse(last.details) as { sha256?: string }).sha256 === sha256) return;
  await store.appendAudit({ at: new Date().toISOString(), actor: 'paybatch', action: 'configuration', subject: 'paybatch.config.json', details: { sha256, configuration: shown } });
}

export interface EngineSession {
  config: Config;
  workspace: Workspace;
  store: SqliteStore;
  log: PipelineLog;
  connection: ServiceConnection;
}

/**
 * `exclusive` (the default) takes the workspace lease (see workspace-lease.ts):
 * only one process takes files in and recovers interrupted work. Commands that only act on rows
 * through the store's guarded steps (cancel, webhook registration) run beside it.
 */
export async function withEngineSession<T>(opts: { home?: string; config?: string }, work: (session: EngineSession) => Promise<T>, options: { exclusive?: boolean; what?: string; service?: boolean } = {}): Promise<T> {
  const config = loadConfig({ file: opts.config, home: opts.home });
  const workspace = openWorkspace(workspaceHome(opts.home));
  const store = SqliteStore.open(workspace.database, { checkIntegrity: options.exclusive !== false });
  let held: HeldWorkspace | null = null;
  try {
    if (options.exclusive !== false) {
      held = await holdWorkspace(store, options.what ?? 'run', workspace.home, systemClock);
      // Lost (another process took the workspace over): stop at once; every step is in the database, nothing is paid twice.
      void held.lost.then((why) => {
        process.stderr.write(`paybatch: ${why}; stopping\n`);
        process.exit(ExitCode.tempFail);
      });
    }
  } catch (error) {
    await store.close();
    throw error;
  }
  await recordConfiguration(store, config);
  const { log, close } = engineLog(workspace.home, (line) => process.stderr.write(`paybatch: ${line}\n`));
  try {
    // Commands that only read and write the store (approve, reject) need no service.
    const connection = options.service === false ? offline : await connectService(config.service, { sandboxLog: () => {}, log });
    if (options.service !== false) process.stderr.write(`paybatch: using ${connection.describe}\n`);
    try {
      return await work({ config, workspace, store, log, connection });
    } finally {
      await connection.close();
    }
  } finally {
    close();
    await held?.release();
    await store.close();
  }
}
