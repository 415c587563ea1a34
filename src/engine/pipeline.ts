/**
 * The payout pipeline, per row: create, check the quote, fund, follow [4]. This
 * file schedules the work: at most `concurrency` calls to the service at once,
 * rows resumed after a crash before anything new is sent, reads when due within
 * the polling budget [D17], and a stop that ends waits at once. What each step
 * does is in steps.ts, what an answer means in decide.ts.
 */
import type { ServiceTransaction } from '../api/answers.js';
import type { CallLimits, PayoutClient } from '../api/client.js';
import { AuthenticationRefused } from '../api/errors.js';
import type { Clock } from '../clock.js';
import type { EngineConfig } from '../config/config.js';
import type { PipelineRow, PipelineStore } from '../store/port.js';
import { refuseInactiveCorridors } from './inactive-corridors.js';
import type { Decision, Policy } from './decide.js';
import type { PipelineLog } from './steps.js';
import { ReadsUnderWay, readShare } from './reads-under-way.js';
import { BackgroundWork } from './background-work.js';
import { RowSteps } from './steps.js';
import { CallSlots, WHOLE_STEP_SLOT } from './call-slots.js';
import { REASONS, isWaitingForSender } from '../payout-states.js';
import { firstInterval } from './read-schedule.js';
import type { CancelAnswer } from './cancel-on-request.js';
import type { ApprovalGate } from './approval-gate.js';
import { cancelOnRequest } from './cancel-on-request.js';
import type { SharedWork } from './shared-work.js';

export type { PipelineLog } from './steps.js';

export interface PipelineDeps {
  store: PipelineStore;
  client: PayoutClient;
  clock: Clock;
  engine: EngineConfig;
  log: PipelineLog;
  /** With approvals on: what each batch may be funded for (see approval-gate.ts). */
  gate?: ApprovalGate;
  /** With several workers on one database: the claims and call slots this worker takes (see shared-work.ts). */
  shared?: SharedWork;
  /**
   * Called as each batch's sending starts: process-wide tuning the CLI owns (it grows V8's young generation for
   * sending, see heap.ts); the engine changes nothing of the process itself.
   */
  beforeSending?: () => void;
}

const PAGE = 500;
/** Funding calls in a row while each outcome is unknown, before the next scheduled read tries again. */
const FUND_ATTEMPTS = 3;
const HEARTBEAT = 'engine';

export function policyOf(engine: EngineConfig, gate?: ApprovalGate): Policy {
  const configured = (currency: string): bigint | null => (engine.batch_budget[currency] === undefined ? null : BigInt(engine.batch_budget[currency]));
  return {
    maxInputPerRow: engine.max_input_per_row,
    allowance: (batchId, currency) => (gate ? gate.allowance(batchId, currency, configured(currency)) : configured(currency)),
    unapprovedRow: (row) => (gate ? gate.unapprovedRow(row) : null),
    fundingDeadlineMs: engine.funding_deadline_ms,
    polling: engine.polling,
    fundAttempts: FUND_ATTEMPTS,
  };
}

export class Pipeline {
  private readonly slots: CallSlots;
  private readonly steps: RowSteps;
  private readonly stopping = new AbortController();
  /** When the current run's --wait ends (ms on the clock); no call waits past it. */
  private deadline: number | undefined;
  /** Rows with a step running in this process, so that a retry never runs beside it. */
  private readonly working = new Map<string, number>();
  /** Work started from inside a step (cancelling a currency's waiting rows), and reads under way, awaited by `idle`. */
  private readonly background = new BackgroundWork();
  /** The reads `follow` started that have not ended (reads-under-way.ts). */
  private readonly reading = new ReadsUnderWay(() => readShare(this.deps.engine.polling.reads_per_second, this.deps.shared?.liveWorkers ?? null),
    (error) => this.deps.log('read_failed', { reason: (error as Error).message }));
  /** Steps in a row that failed because the service did not answer, and the last reason. */
  private failuresInARow = 0;
  private lastFailure = '';

  constructor(private readonly deps: PipelineDeps) {
    this.slots = new CallSlots(deps.engine.concurrency);
    this.steps = new RowSteps({
      store: deps.store,
      client: deps.client,
      clock: deps.clock,
      policy: policyOf(deps.engine, deps.gate),
      log: deps.log,
      limits: (): CallLimits => ({ until: this.deadline, signal: this.stopping.signal }),
      onBalanceExhausted: (currency, detail) => this.balanceExhausted(currency, detail),
      onUnapprovedRow: async (batchId, reason) => deps.gate?.holdForRow(batchId, reason, deps),
    });
  }

  /** No call made from now on waits past this time (a run's --wait). */
  setDeadline(until: number): void {
    this.deadline = until;
  }

  /**
   * Shutting down: no new step starts, waits for a retry end at once, steps waiting for a slot end without doing anything
   * (their rows stay in their recorded phase for the next start). Resolves when the steps in flight ended, or after
   * `graceMs`; a call still in flight then is resolved on restart. Reads under way are dropped (their calls are cut).
   */
  async stop(graceMs: number): Promise<boolean> {
    this.stopping.abort();
    const until = Date.now() + graceMs;
    while (this.slots.activeSteps > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.slots.activeSteps === 0;
  }

  /** Steps started and not ended: each has recorded its intent, and its call may be at the service now. */
  get stepsInFlight(): number {
    return this.slots.activeSteps;
  }

  /** Resolves once the work started from inside steps, and the reads started by `follow`, have ended. */
  async idle(): Promise<void> {
    await this.background.idle();
    this.reading.throwFailure();
  }

  /** The rows with a step under way in this process, or a read started and waiting for its slot ("batch:line"). */
  workingRows(): string[] {
    return [...this.working.keys(), ...this.reading.keys()];
  }

  /** The service stopped answering: the reason, when the last steps all failed for it (any, when `rowsLeft` at the end). */
  serviceTrouble(rowsLeft = false): string | null {
    return this.failuresInARow >= (rowsLeft ? 1 : Math.max(3, this.deps.engine.concurrency)) ? this.lastFailure : null;
  }

  /**
   * With approvals on: every open batch already released is verified again before anything of it is funded (a restart
   * resumes without asking again; an approval that no longer verifies holds the batch: its rows not sent end, those in
   * flight are not funded).
   */
  async prepare(): Promise<void> {
    const { gate, store, log } = this.deps;
    if (!gate) return;
    for (const batch of await store.openBatches()) {
      if (batch.released !== 1) continue;
      const verdict = await gate.check(batch);
      if (verdict.kind === 'ended') {
        const notSent = await store.endReadyRows(batch.id, verdict.outcome, verdict.reason);
        log('approval_held', { batch: batch.id, reason: verdict.reason, not_sent: notSent });
      }
    }
  }

  /**
   * After a (re)start: rows in flight whose last news predates the downtime get a catch-up read (webhooks missed
   * meanwhile are never sent again [6]), then what a crash left between two steps is settled before anything new is sent.
   */
  async resume(): Promise<void> {
    const { store, clock, log } = this.deps;
    await this.prepare();
    const lastAlive = await store.lastHeartbeat(HEARTBEAT);
    await this.heartbeat();
    if (lastAlive !== null) {
      // In the background: they are read within the polling budget anyway, and sending need not wait for them all to
      // be marked (after a large batch, every row in flight is).
      const now = clock.now();
      const catchingUp = store.catchUpReads(new Date(lastAlive).toISOString(), now).then((rows) => {
        if (rows > 0) log('catch_up_reads', { rows, down_s: Math.max(0, Math.round((now - lastAlive) / 1000)), reads_per_second: this.deps.engine.polling.reads_per_second });
      }).catch((error: unknown) => log('catch_up_deferred', { reason: (error as Error).message }));
      this.background.track(catchingUp);
    }
    const resumed = await this.retryStalled();
    if (resumed > 0) log('resumed_rows', { rows: resumed });
  }

  /** The engine is alive now: the next start measures its downtime from this. */
  async heartbeat(): Promise<void> {
    await this.deps.store.recordHeartbeat(HEARTBEAT, this.deps.clock.now());
  }

  /**
   * Rows left between two steps, with no step of this process running on them:
   * after a crash (a create or a funding whose outcome is unknown), or when a
   * step failed and was deferred. A crash between two steps (created, not yet
   * funding; funded, not yet scheduled) leaves a row with no read due: it is read
   * now, and the read carries it on from its recorded phase. Returns how many.
   */
  async retryStalled(): Promise<number> {
    const { store } = this.deps;
    const idle = (row: PipelineRow): boolean => !this.working.has(`${row.batch_id}:${row.line}`);
    const orphans = await store.scheduleOrphans(this.deps.clock.now());
    const creating = (await store.allRowsInPhases(['creating'])).filter(idle);
    const funding = (await store.allRowsInPhases(['funding'])).filter(idle);
    await Promise.all([
      ...creating.map((row) => this.slots.run(() => this.guarded(row, (fresh) => this.steps.send(fresh)))),
      ...funding.map((row) => this.slots.run(() => this.guarded(row, (fresh) => this.steps.resolveFunding(fresh)))),
    ]);
    return orphans + creating.length + funding.length;
  }

  /**
   * Sends every ready row of a batch, at most `concurrency` calls in flight. The
   * rows come from the store a page at a time, and the next page is fetched while
   * the last rows of this one are still in flight, so the window never drains.
   */
  async submit(batchId: string): Promise<void> {
    // Only a released batch is sent: its file found unchanged once taken, its approvals verified here (see release.ts).
    if (!(await this.deps.store.batchReleased(batchId)) || this.deps.gate?.heldReason(batchId) || (this.deps.gate?.enabled && !this.deps.gate.verified(batchId))) return;
    // Process tuning for sending, when the CLI set some up (see heap.ts).
    this.deps.beforeSending?.();
    await refuseInactiveCorridors(batchId, { ...this.deps, signal: this.stopping.signal });
    const inFlight = new Set<Promise<unknown>>();
    const window = this.deps.engine.concurrency * 2;
    // Woken when a row leaves the window. Not Promise.race over the window: each race leaves a reaction on every
    // promise in it, so each row's end ran as many callbacks as races were made while it was in flight.
    let roomMade: (() => void) | null = null;
    // A step that failed for good (the service refused our credentials; the store failed): nothing more is sent, and
    // once the steps in flight have ended, submit fails with the first such error (the run stops with its exit code).
    const failures: unknown[] = [];
    // Past the run's deadline (--wait) nothing new is sent: the rows wait, ready, for the next run.
    const over = (): boolean => failures.length > 0 || this.stopping.signal.aborted || (this.deadline !== undefined && this.deps.clock.now() >= this.deadline);
    const { shared } = this.deps;
    // Shared only: one worker's pass over the batch (its lines, not the rows: at a million rows, a set of the lines
    // sent alone would hold megabytes for nothing on a single worker).
    const tried = new Set<number>();
    for (let after = 0; !over(); ) {
      // Shared with other workers: each takes pages of the rows nobody holds (a window's worth, so that the work
      // spreads), from the start each time: rows a worker that died held come back as soon as its lease expires.
      const rows = shared ? await shared.claimReadyRows(batchId, window) : await this.deps.store.rowsInPhases(batchId, ['ready'], after, PAGE);
      if (rows.length === 0) break;
      // A row back again in this pass was left ready by its step (deferred): it waits for the next pass.
      if (shared && rows.every((row) => tried.has(row.line))) {
        await Promise.all(rows.map((row) => shared.releaseRow(row)));
        break;
      }
      for (const row of rows) {
        if (shared) tried.add(row.line);
        while (inFlight.size >= window) await new Promise<void>((resolve) => { roomMade = resolve; });
        if (over()) break;
        // A row still waiting for a slot when a step failed is not sent: it stays ready, untouched, for the next run. The
        // failure is noted inside the step, before its slot is given to the next row at the step's end: noted by a
        // handler on `sent`, it came a few microtasks after the next row had started, whose create then went out all the
        // same. A row gives its slot back before its end once its funding has answered (see steps.ts): what can fail
        // after that is its last commit, which the next row's intent shares, or a call it takes a slot again for. With
        // other workers the service-wide slot is held to the step's end, and so is this one.
        const sent = this.slots.run(async (slot) => {
          if (failures.length > 0) return false;
          try {
            return await this.guarded(row, (fresh) => this.steps.send(fresh, shared ? WHOLE_STEP_SLOT : slot));
          } catch (error) {
            failures.push(error);
            throw error;
          }
        });
        inFlight.add(sent);
        const ended = (): void => {
          inFlight.delete(sent);
          const waiting = roomMade;
          roomMade = null;
          waiting?.();
        };
        sent.then(ended, ended);
      }
      after = (rows[rows.length - 1] as PipelineRow).line;
    }
    await Promise.allSettled(inFlight);
    if (failures.length > 0) throw failures[0];
  }

  /**
   * Starts the reads due, within the polling budget [D17], and returns how many without waiting for their answers: a
   * read the service is slow to answer holds its own row, not the next round nor the loop calling this (results,
   * schedules, settling); see reads-under-way.ts. `idle()` waits for them.
   */
  async follow(): Promise<number> {
    this.reading.throwFailure();
    if (this.stopping.signal.aborted || this.reading.room === 0) return 0;
    const { shared } = this.deps;
    // [D17] The polling budget is the client's, whatever the number of workers: each takes its share; reads under way
    // count. Shared: no more claimed than may start (a row claimed and left would be kept from the other workers).
    const { room, size } = this.reading;
    return this.readRows(shared ? await shared.claimDueReads(room) : await this.deps.store.dueReads(this.deps.clock.now(), room + size));
  }

  /**
   * Starts the reads of these rows (due, in order), but those being read, within the room the budget leaves: how many.
   * A read may wait for a slot while the loop goes on: its answer is decided on the row as stored then (steps.read).
   */
  readRows(due: readonly PipelineRow[]): number {
    if (this.stopping.signal.aborted) return 0;
    const fresh = this.reading.toStart(due);
    for (const row of fresh) this.background.track(this.reading.start(row, () => this.slots.run(() => this.guarded(row, (now) => this.steps.read(now)))));
    return fresh.length;
  }

  /** [D17] The pause that `read` reads started call for before the next round, at this worker's share of the budget. */
  readsCostMs(read: number): number {
    return this.reading.costMs(read);
  }

  /** [6] A webhook brought the transaction's state: decided on as a read would be, without counting against the polling budget. */
  async applyWebhook(row: PipelineRow, tx: ServiceTransaction): Promise<Decision['label'] | 'busy'> {
    let label: Decision['label'] | 'busy' = 'applied';
    const ran = await this.slots.run(() => this.guarded(row, async (fresh) => {
      label = await this.steps.observe(fresh, tx, 'webhook');
    }));
    // Another worker is at the row: it is read again at once, which brings the same news.
    if (!ran) {
      await this.readSoon(row);
      return 'busy';
    }
    return label;
  }

  /** A row whose state a webhook announced but did not carry: read it at once. */
  async readSoon(row: PipelineRow): Promise<void> {
    await this.deps.store.scheduleRead(row.batch_id, row.line, this.deps.clock.now(), false);
  }

  /** [3.3] `sender.rejected`: the rows waiting on that sender are not funded, and cancelled. */
  async stopForSender(row: PipelineRow, state: string): Promise<void> {
    await this.slots.run(() => this.guarded(row, async () => {
      const waiting = await this.deps.store.row(row.batch_id, row.line);
      const waitingOnSender = waiting?.phase === 'created' && isWaitingForSender(waiting.state);
      // Or already final: the service's cancellation of it may have been applied first (its event and the sender's came
      // together); end() keeps the reason on such a row, and leaves any other final row as it is.
      if (waiting && (waitingOnSender || waiting.phase === 'final')) {
        await this.steps.end(waiting, REASONS.senderRejected, `the sender was ${state} by the service [3.3]`, ['created'], { reasonIfCanceled: true });
      }
    }));
  }

  /**
   * The balance of a currency ran out: nothing more in it is created or funded for the batches open now; their rows not
   * sent yet end as not sent, and their created rows are cancelled, all through the same concurrency limit (other
   * currencies keep their pace).
   */
  private async balanceExhausted(currency: string, detail: string): Promise<void> {
    const { store, clock, log } = this.deps;
    const { batches, notSent } = await store.stopCurrency(currency, detail, new Date(clock.now()).toISOString());
    // Already stopped (several fundings refused at once): the first one said it and cancels what waits.
    if (batches === 0) return;
    log('balance_exhausted', { currency, detail, not_sent: notSent });
    const cancelling = (async () => {
      for (const batch of await store.openBatches()) {
        for (let after = 0; !this.stopping.signal.aborted; ) {
          const rows = await store.rowsInPhases(batch.id, ['created'], after, PAGE, currency);
          if (rows.length === 0) break;
          await Promise.all(rows.map((row) => this.slots.run(() => this.guarded(row, (fresh) => this.steps.end(fresh, REASONS.insufficientFunds, `not funded: ${detail}`).then(() => {})))));
          after = (rows[rows.length - 1] as PipelineRow).line;
        }
      }
    })().catch((error: unknown) => log('balance_stop_deferred', { currency, reason: (error as Error).message }));
    this.background.track(cancelling);
  }

  /** [1], [D11] Cancels on request (paybatch cancel), through the same limit as every call. */
  async cancelOnRequest(row: PipelineRow, by: string | null): Promise<CancelAnswer> {
    let answer: CancelAnswer = { done: false, state: row.state ?? '', reason: 'paybatch is stopping; try again' };
    await this.slots.run(async () => {
      answer = await cancelOnRequest(row, by, { ...this.deps, steps: this.steps, limits: { signal: this.stopping.signal } });
    });
    return answer;
  }

  /**
   * One row's step must not end the others: a failure leaves the row in its
   * recorded phase, to be taken up again. Refused credentials end the run.
   */
  private async guarded(row: PipelineRow, step: (fresh: PipelineRow) => Promise<void>): Promise<boolean> {
    if (this.stopping.signal.aborted) return false;
    const key = `${row.batch_id}:${row.line}`;
    const { shared } = this.deps;
    // Held by another live worker: its step runs there. Claimed here: the row as it stands under the claim comes with it.
    const claimed = shared && !this.working.has(key) ? await shared.claimRow(row) : undefined;
    if (claimed === null) return false;
    this.working.set(key, (this.working.get(key) ?? 0) + 1);
    try {
      // Shared and already claimed here (another step of this worker is at it): the row as it stands now.
      const fresh = !shared ? row : (claimed ?? (await this.deps.store.row(row.batch_id, row.line)));
      if (!fresh || fresh.phase !== row.phase) return false;
      if (shared) {
        if ((await shared.withCallSlot(this.stopping.signal, () => step(fresh).then(() => true))) === null) return false;
      } else await step(fresh);
      this.failuresInARow = 0;
      return true;
    } catch (error) {
      if (error instanceof AuthenticationRefused) throw error;
      this.failuresInARow += 1;
      this.lastFailure = (error as Error).message;
      this.deps.log('row_deferred', { batch: row.batch_id, line: row.line, external_id: row.external_id, reason: (error as Error).message });
      if (row.transaction_id) await this.deps.store.scheduleRead(row.batch_id, row.line, this.deps.clock.now() + firstInterval(this.deps.engine.polling), false);
      return true;
    } finally {
      const left = (this.working.get(key) ?? 1) - 1;
      if (left > 0) this.working.set(key, left);
      else {
        this.working.delete(key);
        if (shared) await shared.releaseRow(row).catch(() => {});
      }
    }
  }
}
