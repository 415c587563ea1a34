/**
 * What `run` and `cancel` both need around their work: the configuration, the
 * workspace and its lock, the store, the log and the service; always closed,
 * lock released, however the work ends.
 */
import { keyFingerprint } from '../approvals/keys.js';
import { loadConfig, workspaceHome } from '../config/config.js';
import type { Config } from '../config/config.js';
import { notificationsShown } from '../config/notifications.js';
import type { ServiceConnection } from './service-connection.js';
import { connectService } from './service-connection.js';
import { describePolling, dropLeftWebhooks, embeddedPolling } from './embedded-sandbox.js';
import { engineLog } from '../engine/log.js';
import type { PipelineLog } from '../engine/pipeline.js';
import { openStore } from '../store/open-store.js';
import { tuneProcess } from './process-tuning.js';
import type { Store } from '../store/port.js';
import { SharedWork } from '../engine/shared-work.js';
import { hostname } from 'node:os';
import { redactUrl } from '../store/database-url.js';
import { withoutUrlCredentials } from '../api/redact.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../audit/chain.js';
import { systemClock } from '../clock.js';
import { ExitCode } from '../errors.js';
import type { PaybatchError } from '../errors.js';
import { checkDatabaseInBackground } from '../store/sqlite/background-check.js';
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
/** Each approver's public key fingerprint, or undefined with approvals off. */
const approvalKeyFingerprints = (policy: Config['approvalPolicy']): Record<string, string> | undefined =>
  policy ? Object.fromEntries([...policy.people.values()].map((p) => [p.name, keyFingerprint(p.publicKey)])) : undefined;

async function recordConfiguration(store: Store, config: Config): Promise<void> {
  const { approvalPolicy: _policy, ...plain } = config;
  // The worker's own name is left out: workers of one deployment share one configuration.
  const { worker: _worker, ...storeConfig } = plain.store;
  const shown = {
    ...plain,
    service: { ...plain.service, api_secret: plain.service.api_secret ? '(set, not recorded)' : undefined, base_url: plain.service.base_url ? withoutUrlCredentials(plain.service.base_url) : undefined },
    reports: { ...plain.reports, service_ledger_url: plain.reports.service_ledger_url ? withoutUrlCredentials(plain.reports.service_ledger_url) : undefined },
    store: { ...storeConfig, url: storeConfig.url ? redactUrl(storeConfig.url) : undefined },
    notifications: notificationsShown(plain.notifications),
    // The keys themselves, not only their files' paths: a key file whose contents change is a configuration change.
    approval_keys: approvalKeyFingerprints(config.approvalPolicy),
  };
  const sha256 = createHash('sha256').update(canonicalJson(shown)).digest('hex');
  const last = await store.lastAudit('configuration');
  if (last && (JSON.parse(last.details) as { sha256?: string }).sha256 === sha256) return;
  await store.appendAudit({ at: new Date().toISOString(), actor: 'paybatch', action: 'configuration', subject: 'paybatch.config.json', details: { sha256, configuration: shown } });
}

export interface EngineSession {
  config: Config;
  workspace: Workspace;
  store: Store;
  log: PipelineLog;
  connection: ServiceConnection;
  /** With PostgreSQL, for `run` and `watch`: this worker among those sharing the database. */
  shared: SharedWork | null;
  /** What SQLite's check of the whole database found wrong (exit 65, or 74 unreadable), or null; it runs beside the work. */
  damage: Promise<PaybatchError | null>;
  /**
   * Ends the process mid-work with the problem's line and exit code, once what
   * the session holds is let go as at its end: the lease released, the log
   * closed, notifications stopped. Never returns; the session's own end then
   * waits for it.
   */
  stop(problem: PaybatchError): Promise<never>;
}

/** Lets go of one thing the session holds: once, however many ask (the session's end, a stop mid-work). */
type LetGo = () => Promise<void>;

function once(letGo: () => unknown): LetGo {
  let done: Promise<void> | undefined;
  return () => (done ??= Promise.resolve().then(letGo).then(() => undefined));
}

/** At the session's end: each in turn, every one tried; the first failure is thrown once all were. */
async function letGoAll(holding: readonly LetGo[]): Promise<void> {
  const failures: unknown[] = [];
  for (const letGo of holding) await letGo().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}

/**
 * What each thing held gets when the session stops the process mid-work: a
 * close that hangs (the client waiting on a call the service never answers)
 * neither keeps the process alive nor keeps the lease from being released.
 * More than notifications take at most to stop (STOP_GRACE_MS, and a quarter
 * second to close their channels).
 */
export const STOP_STEP_MS = 1_500;

/** The process ends next: each in turn, given at most `ms`; one that fails or hangs does not keep the others held. */
async function letGoWithin(holding: readonly LetGo[], ms: number): Promise<void> {
  for (const letGo of holding) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([letGo().catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }
}

/**
 * `run` and `watch` own their work: with PostgreSQL, as a worker joining the others under its name; with SQLite, by the
 * workspace's lease, SQLite's check of every page running beside the work. What is taken is added to `holding`.
 */
async function takeOwnership(session: {
  store: Awaited<ReturnType<typeof openStore>>['store']; sharedStore: Awaited<ReturnType<typeof openStore>>['shared']; config: Config; workspace: Workspace;
  exclusive: boolean; what: string | undefined; holding: LetGo[]; stopOnLoss: (why: string) => void;
}): Promise<{ shared: SharedWork | null; damage: Promise<PaybatchError | null> }> {
  const { store, sharedStore, config, workspace, exclusive, holding, stopOnLoss } = session;
  let shared: SharedWork | null = null;
  // What SQLite's check found wrong; a check stopped (only as the session ends) found nothing to act on.
  let damage: Promise<PaybatchError | null> = Promise.resolve(null);
  if (exclusive && sharedStore) {
    const joined = await SharedWork.join(sharedStore, systemClock, {
      name: config.store.worker ?? hostname(), leaseMs: config.store.worker_lease_ms, unrecordedFileMs: config.store.unrecorded_file_ms, serviceConcurrency: config.engine.service_concurrency ?? config.engine.concurrency,
    });
    shared = joined;
    holding.push(once(() => joined.leave()));
    void joined.lost.then(stopOnLoss);
  } else if (exclusive) {
    const lease = await holdWorkspace(store, session.what ?? 'run', workspace.home, systemClock);
    holding.push(once(() => lease.release()));
    void lease.lost.then(stopOnLoss);
    // SQLite's check of every page, beside the work, once the workspace is this process's (background-check.ts);
    // stopped if the session ends before it answers.
    const check = checkDatabaseInBackground(workspace.database);
    holding.push(once(() => check.stop()));
    damage = check.found.then((found) => (found === 'stopped' ? null : found));
  }
  return { shared, damage };
}

/**
 * `exclusive` (the default) is for `run` and `watch`. With SQLite it takes the
 * workspace lease (see workspace-lease.ts): one such process per workspace.
 * With PostgreSQL it joins the workers sharing the database under its worker
 * name instead (see shared-work.ts). Commands that only act on rows through the
 * store's guarded steps (cancel, webhook registration) run beside them.
 */
export async function withEngineSession<T>(opts: { home?: string; config?: string }, work: (session: EngineSession) => Promise<T>, options: { exclusive?: boolean; what?: string; service?: boolean } = {}): Promise<T> {
  const config = loadConfig({ file: opts.config, home: opts.home });
  const workspace = openWorkspace(workspaceHome(opts.home));
  const exclusive = options.exclusive !== false;
  tuneProcess(config, workspace);
  const { store, shared: sharedStore } = await openStore(config.store, workspace);
  // What the session holds, each added as it is taken and let go in the reverse order, however the session ends.
  const holding: LetGo[] = [once(() => store.close())];
  // Lost (another process took the workspace or the worker name over): stop at once, not through `stop` below, whose
  // letting go would go on working in a workspace that may be another's; every step is in the database, nothing is
  // paid twice.
  const stopOnLoss = (why: string): void => {
    process.stderr.write(`paybatch: ${why}; stopping\n`);
    process.exit(ExitCode.tempFail);
  };
  // Stopped mid-work (damage found beside it): the workspace is still this process's, so what the session holds is
  // let go as at its end before the process ends, each part within STOP_STEP_MS.
  let stopping: Promise<never> | null = null;
  const stop = (problem: PaybatchError): Promise<never> => (stopping ??= (async () => {
    process.stderr.write(`paybatch: ${problem.message}\n`);
    await letGoWithin([...holding].reverse(), STOP_STEP_MS);
    process.exit(problem.exitCode);
  })());
  // At the session's end, however it ends. Stopping: the stop lets go and ends the process; how the work ended meanwhile
  // is not said.
  const letGoAtEnd = async (): Promise<void> => {
    if (stopping) await stopping;
    await letGoAll([...holding].reverse());
  };
  let result: { done: T };
  try {
    const { shared, damage } = await takeOwnership({ store, sharedStore, config, workspace, exclusive, what: options.what, holding, stopOnLoss });
    await recordConfiguration(store, config);
    const { log: plainLog, close } = engineLog(workspace.home, (line) => process.stderr.write(`paybatch: ${line}\n`));
    holding.push(once(close));
    // run and watch tell the configured channels what happened; a notification never waits on, nor stops, a payout.
    // Loaded only when a channel is configured: mail and HTTP senders stay out of the process otherwise.
    const told = exclusive && Object.keys(config.notifications.channels).length > 0;
    const notifications = told ? (await import('../notify/start.js')).startNotifications(config.notifications, store, plainLog, systemClock) : null;
    if (notifications) holding.push(once(() => notifications.stop()));
    const log = notifications?.log ?? plainLog;
    // Commands that only read and write the store (approve, reject) need no service.
    // The embedded sandbox is the workspace's: its state and secret are kept in it, for every command (embedded-sandbox.ts).
    const connection = options.service === false ? offline : await connectService(config.service, {
      sandboxLog: () => {}, log, connections: config.engine.concurrency, home: workspace.home,
      // Several workers on PostgreSQL: the request rates are the service's, for all of them together.
      rateTokens: sharedStore ? (buckets, now) => sharedStore.reserveRateTokens(buckets, now) : undefined,
    });
    holding.push(once(() => connection.close()));
    if (options.service !== false) process.stderr.write(`paybatch: using ${connection.describe}\n`);
    if (connection.embedded && exclusive && !shared) dropLeftWebhooks(connection.embedded);
    const { polling, chosen } = connection.embedded ? embeddedPolling(config.engine.polling) : { polling: config.engine.polling, chosen: false };
    if (connection.embedded && exclusive) process.stderr.write(`paybatch: ${describePolling(polling, chosen)}\n`);
    if (shared) process.stderr.write(`paybatch: worker ${shared.name} on ${config.store.url ? redactUrl(config.store.url) : ''}\n`);
    const used = chosen ? { ...config, engine: { ...config.engine, polling } } : config;
    const done = await work({ config: used, workspace, store, log, connection, shared, damage, stop });
    // Never ended as if all were well before the check has answered.
    const problem = await damage;
    if (problem) throw problem;
    result = { done };
  } catch (error) {
    // The session's own failure is the one told (its exit code, its line); a close that fails after it only warns.
    await letGoAtEnd().catch((closing: unknown) => process.stderr.write(`paybatch: warning: ${(closing as Error).message}\n`));
    throw error;
  }
  await letGoAtEnd();
  return result.done;
}
