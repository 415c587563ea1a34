/**
 * `paybatch watch`'s use case, the always-on daemon: the inbox watched, files
 * taken in the order they arrive (or at the nightly intake time), rows sent as
 * soon as a batch is accepted, states learned by webhook first and by polling as
 * the fallback [1], [D17], results rewritten as states change, batches settled,
 * and schedules run. Everything it knows is in the store, so a restart, after a
 * clean stop or a crash, carries on where it was.
 */
import type { PayoutClient } from '../api/client.js';
import { AuthenticationRefused } from '../api/errors.js';
import type { Credentials } from '../api/signing.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { webhookUrl } from '../config/config.js';
import { recoverInterruptedIntakes } from '../engine/intake-recovery.js';
import type { PipelineLog } from '../engine/pipeline.js';
import { Pipeline } from '../engine/pipeline.js';
import { takeInboxFile } from '../engine/run.js';
import { releaseBatch } from '../engine/release.js';
import { archiveSettledElsewhere, resultsRepeat, settleIfDone } from '../engine/settle.js';
import type { SharedWork } from '../engine/shared-work.js';
import { registerWebhooks } from './webhook-sync.js';
import { OpenResults, reconcileYesterday } from './daily-reports.js';
import type { ApprovalStore, AuditStore, DuplicateStore, IntakeStore, MetricsStore, PipelineStore, ReportStore, ScheduleStore, WebhookStore } from '../store/port.js';
import { Metrics } from '../console/metrics.js';
import { metricsLog } from '../console/metrics-log.js';
import { ApprovalGate, RELEASE_SEAL } from '../engine/approval-gate.js';
import type { Workspace } from '../workspace/workspace.js';
import { EventApplier } from './event-applier.js';
import { InboxWatcher } from './inbox-watcher.js';
import { IntakeQueue } from './intake-queue.js';
import { Schedules } from './schedules.js';
import { WebhookReceiver } from './webhook-receiver.js';
import { DatabaseHealth } from './database-health.js';

export interface DaemonDeps {
  workspace: Workspace;
  store: IntakeStore & PipelineStore & WebhookStore & ScheduleStore & ReportStore & ApprovalStore & AuditStore & MetricsStore & DuplicateStore;
  client: PayoutClient;
  /** The service's key and secret: deliveries are signed with them [D3]. */
  credentials: Credentials;
  config: Config;
  clock: Clock;
  log: PipelineLog;
  force?: boolean;
  /** The service's ledger, for the daily reconciliation's checks, when it has one. */
  ledgerUrl?: string | null;
  /** Pause between rounds of the main loop; engine.loop_ms when absent. */
  tickMs?: number;
  /** Told of each pause of the main loop as it starts, with its length (a test moves its manual clock on by it). */
  paused?: (ms: number) => void;
  /** Several workers on PostgreSQL: this one (see engine/shared-work.ts). */
  shared?: SharedWork | null;
  /** What /metrics serves; by default the daemon makes its own, with Node's process metrics (daemon.metrics). */
  metrics?: Metrics;
  /** Process tuning for sending, set up by the CLI (see PipelineDeps.beforeSending). */
  beforeSending?: () => void;
}

export interface DaemonStarted {
  webhookUrl: string;
  healthUrl: string;
  /** Schedule name to its next run (ms since the epoch). */
  schedules: Record<string, number | null>;
}

const WEBHOOK_SYNC_RETRY_MS = 60_000;
/** How often rows left between two steps (a deferred step) are taken up again. */
const STALLED_RETRY_MS = 10_000;
/** The same with several workers: also how soon what a dead worker left in flight is taken over once its lease expired. */
const SHARED_STALLED_RETRY_MS = 2_000;

export class Daemon {
  private readonly pipeline: Pipeline;
  private readonly gate: ApprovalGate;
  private readonly receiver: WebhookReceiver;
  private readonly applier: EventApplier;
  private readonly watcher: InboxWatcher;
  private readonly schedules: Schedules;
  private stopping = false;
  private wake: () => void = () => {};
  private loop: Promise<void> = Promise.resolve();
  private stopped: Promise<void> | null = null;
  /** Files to take, in arrival order, a few at once. */
  private readonly intake: IntakeQueue;
  /** Files that arrived while an intake schedule is set: taken at its next run. */
  private readonly waiting: string[] = [];
  private readonly submitting = new Map<string, Promise<void>>();
  private webhooksSyncedAt: number | null = null;
  /** Open batches whose results this process wrote: written once more when they are no longer open. */
  private readonly openResults = new OpenResults();
  private nextSyncAttempt = 0;
  private finish: () => void = () => {};
  /** Resolves once the daemon has stopped, on a signal or on a failure it cannot carry on from. */
  readonly finished = new Promise<void>((resolve) => {
    this.finish = resolve;
  });
  /** Why the daemon stopped by itself (the service refused its credentials), if it did. */
  failure: Error | null = null;

  /** watch.stable_ms, the older name, else intake.stable_ms. */
  private get stableMs(): number {
    return this.deps.config.watch.stable_ms ?? this.deps.config.intake.stable_ms;
  }

  /** The database file watched for deletion, replacement, truncation and damage. */
  private health: DatabaseHealth | null = null;
  private sick = false;
  /** Damage the check of the whole database found, kept until the health watch exists. */
  private damage: string | null = null;
  /** Timers that send a batch again later (not released yet), cleared at stop; files have theirs in the intake queue. */
  private readonly later = new Set<NodeJS.Timeout>();

  private after(ms: number, work: () => void): void {
    const timer = setTimeout(() => {
      this.later.delete(timer);
      if (!this.stopping) work();
    }, Math.max(50, ms));
    this.later.add(timer);
  }

  /** Served at /metrics on the receiver's listener; the console can serve the same (metrics.scrape()). */
  readonly metrics: Metrics;
  private readonly deps: DaemonDeps;
  private readonly unobserveCalls: () => void;

  constructor(given: DaemonDeps) {
    this.metrics = given.metrics ?? new Metrics({ store: given.store, clock: given.clock, processMetrics: true });
    // Every event the daemon and its engine log is also counted (see console/metrics-log.ts).
    const deps = (this.deps = { ...given, log: metricsLog(given.log, this.metrics) });
    this.unobserveCalls = deps.client.observeCalls((endpoint, outcome, seconds) => this.metrics.call(endpoint, outcome, seconds));
    const { config, store, client, clock, log } = deps;
    this.gate = new ApprovalGate(config.approvalPolicy, store, clock, config.approvals.estimate_rates, client.derivedKey(RELEASE_SEAL));
    this.pipeline = new Pipeline({ store, client, clock, engine: config.engine, log, gate: this.gate, shared: deps.shared ?? undefined, beforeSending: deps.beforeSending });
    this.applier = new EventApplier({ store, pipeline: this.pipeline, clock, log, claim: deps.shared ? (limit) => (deps.shared as SharedWork).claimWebhookEvents(limit) : undefined });
    const { listen } = config.watch;
    this.receiver = new WebhookReceiver({
      host: listen.host,
      port: listen.port,
      publicUrl: (port) => webhookUrl(config.watch, port),
      credentials: deps.credentials,
      store,
      clock,
      maxBodyBytes: config.watch.max_body_bytes,
      bodyTimeoutMs: config.watch.body_timeout_ms,
      maxDeliveriesInFlight: config.watch.max_deliveries_in_flight,
      maxConnections: config.watch.max_connections,
      log,
      onStored: () => this.applier.notify(),
      unhealthy: () => this.health?.check() ?? null,
      held: deps.shared ? () => (deps.shared as SharedWork).held() : undefined,
      metrics: this.metrics,
    });
    this.intake = new IntakeQueue({
      take: (file, before) => takeInboxFile(file, { ...this.deps, stableMs: this.stableMs }, before),
      // Not only once the loop has seen it: damage found beside the work is known here first.
      open: () => !this.stopping && !this.sick && !this.health?.check(),
      accepted: (batch) => this.submit(batch),
      failed: (file, error) => {
        this.health?.failed(error);
        this.deps.log('intake_failed', { file, reason: (error as Error).message });
      },
    });
    this.watcher = new InboxWatcher({ inbox: deps.workspace.folders.inbox, onFile: (path) => this.arrived(path), onChange: (path) => this.intake.changed(path), log });
    this.schedules = new Schedules(config.watch.schedules, store, clock);
  }

  async start(): Promise<DaemonStarted> {
    const { store, workspace } = this.deps;
    // The SQLite file is watched for deletion, replacement and damage; PostgreSQL answers for itself.
    this.health = this.deps.shared ? null : new DatabaseHealth(workspace.database);
    if (this.damage !== null) this.health?.damaged(this.damage);
    await this.recoverIntakes(true);
    await this.pipeline.resume();
    await this.receiver.listen();
    // Events stored before a stop but not applied yet are applied first.
    this.applier.notify();
    await this.syncWebhooks();
    await this.schedules.start();
    await this.watcher.start();
    for (const batch of await store.openBatches()) this.submit(batch.id);
    this.loop = this.run();
    const url = new URL(this.receiver.publicUrl);
    return { webhookUrl: this.receiver.publicUrl, healthUrl: `${url.origin}/healthz`, schedules: this.schedules.upcoming() };
  }

  /**
   * Stops taking files and webhooks, lets the calls in flight finish (or parks
   * them: their intent is recorded, and a restart resolves them), writes the
   * results, and resolves. Within `graceMs` however busy it was.
   */
  stop(graceMs: number): Promise<void> {
    this.stopped ??= this.shutDown(graceMs).finally(() => this.finish());
    return this.stopped;
  }

  private async shutDown(graceMs: number): Promise<void> {
    const until = Date.now() + graceMs;
    const left = (): number => Math.max(0, until - Date.now());
    // The timer is not unref'd: while waiting, it is what keeps the process alive; it is cleared as soon as the work is done.
    const within = async <T>(work: Promise<T>, ms: number): Promise<T | void> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      } finally {
        clearTimeout(timer);
      }
    };
    this.stopping = true;
    this.intake.stop();
    for (const timer of this.later) clearTimeout(timer);
    this.later.clear();
    this.wake();
    this.deps.log('watch_stopping', { queued_files: this.intake.length + this.intake.busy, waiting_files: this.waiting.length });
    await within(this.watcher.close(), 1_000);
    await within(this.receiver.close(), 2_000);
    const settled = await this.pipeline.stop(Math.max(0, left() - 1_500));
    await within(this.applier.idle(), Math.max(0, left() - 1_000));
    await within(Promise.all([this.loop, ...this.submitting.values()]), Math.max(0, left() - 1_000));
    // A read that failed for a reason to stop (credentials refused) is the daemon's failure (77); the stop goes on.
    await within(this.pipeline.idle(), Math.max(0, left() - 1_000)).catch((error: unknown) => {
      if (error instanceof AuthenticationRefused) this.failure ??= error;
      else this.deps.log('watch_stop_read_failed', { reason: (error as Error).message });
    });
    // An intake still reading a file is left: its batch is recorded as in intake, and a restart takes the file again.
    await within(this.openResults.write(this.deps), Math.max(0, left() - 200)).catch(() => {});
    await this.pipeline.heartbeat().catch(() => {});
    this.deps.log('watch_stopped', { calls_parked: settled ? 0 : 'some; resolved at the next start' });
    this.unobserveCalls();
  }

  private arrived(path: string): void {
    if (this.stopping) return;
    if (this.deps.config.watch.schedules.intake) {
      if (!this.waiting.includes(path)) {
        this.waiting.push(path);
        const at = this.schedules.upcoming().intake;
        this.deps.log('intake_waiting', { file: path, until: at ? new Date(at).toISOString() : 'the next intake time' });
      }
      return;
    }
    this.enqueue(path);
  }

  private enqueue(path: string): void {
    this.intake.add(path);
  }

  private submit(batchId: string): void {
    if (this.submitting.has(batchId) || this.stopping) return;
    const sending = this.release(batchId)
      .then((released) => (released ? this.pipeline.submit(batchId) : undefined))
      .catch((error: unknown) => this.deps.log('submit_failed', { batch: batchId, reason: (error as Error).message }))
      .finally(() => this.submitting.delete(batchId));
    this.submitting.set(batchId, sending);
  }

  /** True when the batch may be sent now; otherwise it is sent later (not released yet) or never (its file changed). */
  private async release(batchId: string): Promise<boolean> {
    const batch = await this.deps.store.batch(batchId);
    if (!batch || batch.status !== 'accepted') return false;
    const release = await releaseBatch(batch, { ...this.deps, gate: this.gate });
    if (release.kind === 'wait') this.after(release.untilMs - this.deps.clock.now(), () => this.submit(batchId));
    if (release.kind === 'withdrawn') this.deps.log('intake_withdrawn', { batch: batchId, file: batch.file_name, reason: release.reason });
    if (release.kind === 'held') this.deps.log('approval_held', { batch: batchId, reason: release.reason, not_sent: release.notSent });
    return release.kind === 'released';
  }

  private async syncWebhooks(): Promise<void> {
    const synced = await registerWebhooks(this.deps, this.receiver.publicUrl, WEBHOOK_SYNC_RETRY_MS);
    if ('syncedAt' in synced) this.webhooksSyncedAt = synced.syncedAt;
    else this.nextSyncAttempt = synced.retryAt;
  }

  /** At start, what a crash left of intakes (this worker's own included); later, with several workers, what dead workers left. */
  private async recoverIntakes(atStart: boolean): Promise<void> {
    const { store, workspace, log } = this.deps;
    for (const batch of await recoverInterruptedIntakes({ workspace, store, shared: this.deps.shared, atStart, log, knownBatches: () => store.batchesInProcessing() })) {
      log('intake_interrupted', { batch, action: 'file put back in the inbox' });
    }
  }

  /**
   * A step that failed (the service or the database did not answer) is tried
   * again, and a batch whose sending stopped is sent on. With several workers,
   * this is also when what a dead worker left is taken over: its unfinished
   * intakes, and the files of batches settled elsewhere are archived.
   */
  private async retryStalled(): Promise<void> {
    if (this.deps.shared) {
      // Events kept by another worker's receiver that it did not apply (it died, or is busy) are applied here.
      this.applier.notify();
      await this.recoverIntakes(false);
      const swept = await this.deps.shared.sweepIdle(this.pipeline.workingRows(), this.deps.config.store.idle_claim_ms);
      if (swept.rows + swept.slots > 0) this.deps.log('claims_freed', { rows: swept.rows, call_slots: swept.slots, why: 'held here but not in use (a release that failed)' });
      const archived = await archiveSettledElsewhere(this.deps);
      if (archived > 0) this.deps.log('files_archived', { files: archived, why: 'their batches were settled by another worker' });
    }
    const taken = await this.pipeline.retryStalled();
    if (taken > 0) this.deps.log('stalled_rows_retried', { rows: taken });
    await this.joinOpenBatches();
  }

  /** Open batches with rows to send that this worker is not sending yet: it joins in (the rows are shared by claims). */
  private async joinOpenBatches(): Promise<void> {
    for (const batch of await this.deps.store.openBatches()) {
      if (!this.submitting.has(batch.id) && (await this.deps.store.rowsInPhases(batch.id, ['ready'], 0, 1)).length > 0) this.submit(batch.id);
    }
  }

  private async runSchedule(name: string): Promise<void> {
    this.deps.log('schedule_ran', { schedule: name });
    if (name === 'intake') {
      for (const path of this.waiting.splice(0)) this.enqueue(path);
    } else if (name === 'reconcile') {
      await this.openResults.write(this.deps);
      await reconcileYesterday(this.deps);
    }
  }

  private async run(): Promise<void> {
    const { clock, config, store, log } = this.deps;
    const results = resultsRepeat(config.watch.results_every_ms, clock.now());
    let lastRetry = clock.now();
    while (!this.stopping) {
      try {
        if (this.unhealthy()) {
          await this.pause(this.deps.tickMs ?? this.deps.config.engine.loop_ms);
          continue;
        }
        await this.pipeline.heartbeat();
        for (const name of await this.schedules.due()) await this.runSchedule(name);
        if (this.webhooksSyncedAt === null && clock.now() >= this.nextSyncAttempt) await this.syncWebhooks();
        if (clock.now() - lastRetry >= (this.deps.shared ? SHARED_STALLED_RETRY_MS : STALLED_RETRY_MS)) {
          await this.retryStalled();
          lastRetry = clock.now();
        }
        // Several workers: a batch another worker took in is sent from here too, as soon as there is one.
        if (this.deps.shared) await this.joinOpenBatches();
        const read = await this.pipeline.follow();
        for (const batch of await store.openBatches()) {
          if (!this.submitting.has(batch.id)) await settleIfDone(this.deps, batch.id);
        }
        if (results.due(clock.now())) {
          const started = clock.now();
          await this.openResults.write(this.deps);
          results.ran(started, clock.now());
        }
        // [D17] N reads cost N / (this worker's share of reads_per_second) seconds: the rate stays within the budget.
        await this.pause(Math.max(this.deps.tickMs ?? this.deps.config.engine.loop_ms, this.pipeline.readsCostMs(read)));
      } catch (error) {
        if (this.stopping) return;
        if (this.health?.failed(error)) continue;
        if (error instanceof AuthenticationRefused) {
          // Nothing can be done with refused credentials: stop, and say so (exit 77).
          this.failure = error;
          void this.stop(8_000).catch((stopping: unknown) => log('watch_stop_failed', { reason: (stopping as Error).message }));
          return;
        }
        log('watch_loop_error', { reason: (error as Error).message });
        await this.pause(this.deps.tickMs ?? this.deps.config.engine.loop_ms);
      }
    }
  }

  /** Damage found by the check of the whole database beside the work (background-check.ts): seen at the next tick. */
  databaseDamaged(problem: string): void {
    this.damage = problem;
    this.health?.damaged(problem);
  }

  /**
   * The database deleted, replaced, truncated or damaged: no more work is taken
   * (files, deliveries, calls), the log and /healthz say so once, and the daemon
   * waits for a person (see docs/operations.md, "Backup and restore").
   */
  private unhealthy(): boolean {
    const problem = this.health?.check() ?? null;
    if (!problem) return false;
    if (!this.sick) {
      this.sick = true;
      this.deps.log('database_unhealthy', { problem, action: 'no more work is taken; /healthz answers 503', what_to_do: DatabaseHealth.advice });
      void this.watcher.close();
      void this.pipeline.stop(0);
    }
    return true;
  }

  private pause(ms: number): Promise<void> {
    this.deps.paused?.(ms);
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
