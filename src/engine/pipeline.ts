/**
 * The payout pipeline, per row: create, check the quote, fund, follow [4].
 *
 * Exactly once: before each write the row's intent is recorded (creating,
 * funding), so that after a crash, or when an answer is lost, the outcome is
 * found out before anything is sent again: a create by looking the external_id
 * up [D7], a fund by reading the transaction [D10]. The service itself refuses
 * a second transaction with the same external_id [D6] and a second funding
 * [D10], so even a race cannot pay twice.
 */
import pLimit from 'p-limit';
import type { ServiceTransaction } from '../api/answers.js';
import type { PayoutClient } from '../api/client.js';
import { AuthenticationRefused, OutcomeUnknown, Rejected, Retryable } from '../api/errors.js';
import type { Clock } from '../clock.js';
import type { EngineConfig } from '../config/config.js';
import type { Observation, ObservationSource, PipelineRow, PipelineStore } from '../store/store.js';

/** States a transaction is in only once funded [3.1]. */
const FUNDED_STATES: ReadonlySet<string> = new Set(['pending', 'mispaid', 'received', 'processing', 'paid', 'manual', 'error', 'exception', 'stuck', 'refunded']);
const WAITING_FOR_SENDER: ReadonlySet<string> = new Set(['initial', 'verified']);
const RESOLVE_ATTEMPTS = 5;

export interface PipelineLog {
  (event: string, fields: Record<string, unknown>): void;
}

export interface PipelineDeps {
  store: PipelineStore;
  client: PayoutClient;
  clock: Clock;
  engine: EngineConfig;
  log: PipelineLog;
  sleep?: (ms: number) => Promise<void>;
}

export function toObservation(tx: ServiceTransaction, source: ObservationSource): Observation {
  return {
    source,
    transaction_id: tx.id,
    state: tx.state,
    state_reason: tx.state_reason,
    state_reason_code: tx.state_reason_code,
    input_amount: tx.input_amount_in_cents,
    input_currency: tx.input_currency,
    output_amount: tx.output_amount_in_cents,
    output_currency: tx.output_currency,
    refunded_amount: tx.refunded_amount_in_cents,
    updated_at: tx.updated_at,
  };
}

/** A row is final when paid, refunded, or cancelled before it was funded. */
export function isFinal(state: string, funded: boolean): boolean {
  return state === 'paid' || state === 'refunded' || (state === 'canceled' && !funded);
}

export class Pipeline {
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly sleep: (ms: number) => Promise<void>;
  private stopping = false;
  /** Rows with a step running in this process, so that a retry never runs beside it. */
  private readonly working = new Map<string, number>();

  constructor(private readonly deps: PipelineDeps) {
    this.limit = pLimit(deps.engine.concurrency);
    this.sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /**
   * Shutting down: no new step starts; steps waiting for a slot end at once without doing
   * anything (their rows stay in their recorded phase for the next start). Resolves when the
   * steps in flight ended, or after `graceMs`, whichever comes first; a call still in flight
   * then is resolved on restart. (Not p-limit's clearQueue: the promises it drops never settle.)
   */
  async stop(graceMs: number): Promise<boolean> {
    this.stopping = true;
    const until = Date.now() + graceMs;
    while (this.limit.activeCount > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.limit.activeCount === 0;
  }

  /** After a restart: settle what was in flight before anything new is sent. */
  async resume(): Promise<void> {
    const resumed = await this.retryStalled();
    if (resumed > 0) this.deps.log('resumed_rows', { rows: resumed });
  }

  /**
   * Rows left between two steps, with no step of this process running on them: after a crash
   * (a create or a funding whose outcome is unknown), or when a step failed and was deferred
   * (the service or the database did not answer). A crash between two steps (created, not yet
   * funding; funded, not yet scheduled) leaves a row with no read due: read it now, and the read
   * carries it on from its recorded phase. Returns how many rows were taken up.
   */
  async retryStalled(): Promise<number> {
    const { store } = this.deps;
    const idle = (row: PipelineRow): boolean => !this.working.has(`${row.batch_id}:${row.line}`);
    const orphans = await store.scheduleOrphans(this.deps.clock.now());
    const creating = (await store.allRowsInPhases(['creating'])).filter(idle);
    const funding = (await store.allRowsInPhases(['funding'])).filter(idle);
    await Promise.all(creating.map((row) => this.limit(() => this.guarded(row, () => this.sendRow(row)))));
    await Promise.all(funding.map((row) => this.limit(() => this.guarded(row, () => this.resolveFunding(row, 0)))));
    return orphans + creating.length + funding.length;
  }

  /**
   * Sends every ready row of a batch, at most `concurrency` calls in flight. The
   * rows come from the store a page at a time, and the next page is fetched while
   * the last rows of this one are still in flight, so the window never drains.
   */
  async submit(batchId: string): Promise<void> {
    await this.refuseInactiveCorridors(batchId);
    const inFlight = new Set<Promise<void>>();
    const window = this.deps.engine.concurrency * 2;
    for (let after = 0; ; ) {
      const rows = await this.deps.store.rowsInPhases(batchId, ['ready'], after, 500);
      if (rows.length === 0 || this.stopping) break;
      for (const row of rows) {
        while (inFlight.size >= window) await Promise.race(inFlight);
        if (this.stopping) break;
        const sent = this.limit(() => this.guarded(row, () => this.sendRow(row)));
        inFlight.add(sent);
        void sent.finally(() => inFlight.delete(sent));
      }
      after = (rows[rows.length - 1] as PipelineRow).line;
    }
    await Promise.all(inFlight);
  }

  /** [1], [D12] Before sending, the corridors the batch uses are read; rows on an inactive one are not sent. */
  private async refuseInactiveCorridors(batchId: string): Promise<void> {
    const { store, client } = this.deps;
    const key = (r: PipelineRow['request']): string => `${r.recipient.country_code}|${r.type}|${r.input_currency_code}|${r.output_currency_code}`;
    const countries = new Set<string>();
    for (let after = 0; ; ) {
      const rows = await store.rowsInPhases(batchId, ['ready'], after, 1000);
      if (rows.length === 0) break;
      for (const row of rows) countries.add(row.request.recipient.country_code as string);
      after = (rows[rows.length - 1] as PipelineRow).line;
    }
    const corridors = new Map(await Promise.all([...countries].map(async (c) => [c, await client.listCorridors(c)] as const)));
    const active = new Map<string, boolean>();
    for (let after = 0; ; ) {
      const rows = await store.rowsInPhases(batchId, ['ready'], after, 1000);
      if (rows.length === 0) return;
      for (const row of rows) {
        const { request } = row;
        const country = request.recipient.country_code as string;
        if (!active.has(key(request))) {
          const serving = (corridors.get(country) ?? []).filter((c) => c.type === request.type && c.input_currency_codes.includes(request.input_currency_code) && c.output_currency_codes.includes(request.output_currency_code));
          active.set(key(request), serving.some((c) => c.active));
        }
        if (!active.get(key(request))) {
          await store.movePhase(batchId, row.line, ['ready'], 'not_sent', 'corridor_inactive');
          this.deps.log('corridor_inactive', { batch: batchId, line: row.line, external_id: row.external_id, country, type: request.type });
        }
      }
      after = (rows[rows.length - 1] as PipelineRow).line;
    }
  }

  /** Reads the transactions whose next read is due, within the polling budget [D17]. */
  async follow(): Promise<number> {
    if (this.stopping) return 0;
    const due = await this.deps.store.dueReads(this.deps.clock.now(), this.deps.engine.polling.reads_per_second);
    await Promise.all(due.map((row) => this.limit(() => this.guarded(row, async () => {
      await this.apply(row, await this.deps.client.getTransaction(row.transaction_id as string), 'polling');
    }))));
    return due.length;
  }

  /**
   * [6] A webhook brought the transaction's state: applied as a read would be (the funding
   * decision included), without counting against the polling budget.
   */
  async applyWebhook(row: PipelineRow, tx: ServiceTransaction): Promise<void> {
    await this.limit(() => this.guarded(row, () => this.apply(row, tx, 'webhook')));
  }

  /** A row whose state a webhook announced but did not carry: read it at once. */
  async readSoon(row: PipelineRow): Promise<void> {
    await this.deps.store.scheduleRead(row.batch_id, row.line, this.deps.clock.now(), false);
  }

  /** [3.3] `sender.rejected`: the rows waiting on that sender are not funded, and cancelled. */
  async stopForSender(row: PipelineRow): Promise<void> {
    await this.limit(() => this.guarded(row, () => this.cancel(row, 'sender_rejected')));
  }

  /**
   * One row's step must not end the others: a failure leaves the row in its
   * recorded phase, to be taken up again. Refused credentials end the run.
   */
  private async guarded(row: PipelineRow, step: () => Promise<void>): Promise<void> {
    if (this.stopping) return;
    const key = `${row.batch_id}:${row.line}`;
    this.working.set(key, (this.working.get(key) ?? 0) + 1);
    try {
      await step();
    } catch (error) {
      if (error instanceof AuthenticationRefused) throw error;
      this.deps.log('row_deferred', { batch: row.batch_id, line: row.line, external_id: row.external_id, reason: (error as Error).message });
      if (row.transaction_id) await this.deps.store.scheduleRead(row.batch_id, row.line, this.deps.clock.now() + this.firstInterval(), false);
    } finally {
      const left = (this.working.get(key) ?? 1) - 1;
      if (left > 0) this.working.set(key, left);
      else this.working.delete(key);
    }
  }

  private async sendRow(row: PipelineRow): Promise<void> {
    const tx = await this.create(row);
    if (tx) await this.afterCreate({ ...row, phase: 'created', transaction_id: tx.id, state: tx.state, input_amount: tx.input_amount_in_cents, input_currency: tx.input_currency }, tx);
  }

  /** [D6], [D7] Creates the transaction once; returns it, or null when the row ended without one. */
  private async create(row: PipelineRow): Promise<ServiceTransaction | null> {
    const { store, client } = this.deps;
    if (row.phase === 'ready' && !(await store.movePhase(row.batch_id, row.line, ['ready'], 'creating'))) return null;
    for (let attempt = 1; ; attempt++) {
      // A create that may have happened (a restart, a lost answer) is looked up before any new one.
      if (attempt > 1 || row.phase === 'creating') {
        const [existing] = await client.findTransactions(row.external_id);
        if (existing) return this.recordCreated(row, existing, 'polling');
      }
      try {
        return await this.recordCreated(row, await client.createTransaction(row.request), 'answer');
      } catch (error) {
        if (error instanceof Rejected) {
          if (error.concerns('external_id')) {
            const [existing] = await client.findTransactions(row.external_id);
            if (existing) return this.recordCreated(row, existing, 'polling');
          }
          await store.refuseRow(row.batch_id, row.line, ['creating'], 'rejected_by_service', error.message);
          this.deps.log('row_refused_by_service', { batch: row.batch_id, line: row.line, external_id: row.external_id, reason: error.message });
          return null;
        }
        if (!(error instanceof OutcomeUnknown) || attempt >= RESOLVE_ATTEMPTS) throw error;
        await this.sleep(Math.min(10_000, 200 * 2 ** attempt));
      }
    }
  }

  private async recordCreated(row: PipelineRow, tx: ServiceTransaction, source: ObservationSource): Promise<ServiceTransaction> {
    await this.deps.store.observe(row.batch_id, row.line, toObservation(tx, source), 'created', this.now());
    this.deps.log('created', { batch: row.batch_id, line: row.line, external_id: row.external_id, transaction: tx.id, state: tx.state });
    return tx;
  }

  /** [4] The computed input amount is missing, or over the configured maximum for one row. */
  private overRowLimit(tx: ServiceTransaction): boolean {
    const limit = tx.input_currency ? this.deps.engine.max_input_per_row[tx.input_currency] : undefined;
    return tx.input_amount_in_cents === null || (limit !== undefined && BigInt(tx.input_amount_in_cents) > BigInt(limit));
  }

  /** [4] The client checks the computed input amount, then funds once the sender is approved [3.3]. */
  private async afterCreate(row: PipelineRow, tx: ServiceTransaction): Promise<void> {
    if (this.overRowLimit(tx)) {
      await this.cancel(row, 'quote_rejected');
      return;
    }
    await this.apply(row, tx, 'answer');
  }

  /** What an observation of the transaction means for the row, and what to do next. */
  private async apply(row: PipelineRow, tx: ServiceTransaction, source: ObservationSource): Promise<void> {
    const { store } = this.deps;
    const counted = source === 'polling';
    // Funded by what paybatch recorded, what the state shows, or what the service says (funded_at is not in every service's answers).
    const funded = row.phase === 'funded' || row.funded_at !== null || FUNDED_STATES.has(tx.state) || (tx.raw.funded_at !== null && tx.raw.funded_at !== undefined);
    const final = isFinal(tx.state, funded);
    if (final) {
      if (funded) await store.recordFunded(row.batch_id, row.line, this.now());
      await store.observe(row.batch_id, row.line, toObservation(tx, source), 'final', this.now());
      this.deps.log('settled', { batch: row.batch_id, line: row.line, transaction: tx.id, state: tx.state, code: tx.state_reason_code });
      return;
    }
    await store.observe(row.batch_id, row.line, toObservation(tx, source));
    if (row.phase === 'created' && FUNDED_STATES.has(tx.state)) await store.recordFunded(row.batch_id, row.line, this.now());
    else if (row.phase === 'created' && tx.state === 'approved') {
      // The amount is checked before every funding: a service may quote again later.
      if (this.overRowLimit(tx)) await this.cancel(row, 'quote_rejected');
      else await this.fund(row, tx);
      return;
    } else if (row.phase === 'created' && WAITING_FOR_SENDER.has(tx.state) && this.pastFundingDeadline(row)) {
      await this.cancel(row, 'sender_not_approved');
      return;
    }
    await this.scheduleNextRead(row, counted);
  }

  private pastFundingDeadline(row: PipelineRow): boolean {
    const created = row.created_at ? Date.parse(row.created_at) : this.deps.clock.now();
    return this.deps.clock.now() >= created + this.deps.engine.funding_deadline_ms;
  }

  /** [D10] Funds with the amount guard, after reserving the row within the batch's budget. */
  private async fund(row: PipelineRow, tx: ServiceTransaction, attempt = 0): Promise<void> {
    const { store, client } = this.deps;
    const budget = tx.input_currency ? this.deps.engine.batch_budget[tx.input_currency] : undefined;
    const reservation = await store.reserveFunding(row.batch_id, row.line, budget === undefined ? null : BigInt(budget));
    if (reservation === 'over_budget') return this.cancel(row, 'quote_rejected');
    if (reservation === 'stopped') return this.cancel(row, 'insufficient_funds');
    if (reservation === 'busy') return;
    try {
      const funded = await client.fundTransaction(tx.id, { input_amount_in_cents: tx.input_amount_in_cents as string, input_currency: tx.input_currency as string });
      await store.recordFunded(row.batch_id, row.line, this.now());
      await store.observe(row.batch_id, row.line, toObservation(funded, 'answer'));
      this.deps.log('funded', { batch: row.batch_id, line: row.line, transaction: tx.id, amount: tx.input_amount_in_cents, currency: tx.input_currency });
      await this.scheduleNextRead({ ...row, phase: 'funded' }, false);
    } catch (error) {
      if (error instanceof Rejected && error.concerns('balance')) {
        this.deps.log('balance_exhausted', { batch: row.batch_id, line: row.line });
        await store.movePhase(row.batch_id, row.line, ['funding'], 'created');
        await this.stopFunding(row.batch_id);
        await this.cancel(row, 'insufficient_funds');
        return;
      }
      if (error instanceof Rejected || error instanceof OutcomeUnknown) {
        await this.resolveFunding({ ...row, phase: 'funding' }, attempt + 1);
        return;
      }
      throw error;
    }
  }

  /** A funding whose outcome is not known: read the transaction before any new funding. */
  private async resolveFunding(row: PipelineRow, attempts: number): Promise<void> {
    const { store, client } = this.deps;
    const tx = await client.getTransaction(row.transaction_id as string);
    if (FUNDED_STATES.has(tx.state)) {
      await store.recordFunded(row.batch_id, row.line, this.now());
      await this.apply({ ...row, phase: 'funded' }, tx, 'polling');
      return;
    }
    await store.movePhase(row.batch_id, row.line, ['funding'], 'created');
    const created = { ...row, phase: 'created' };
    if (tx.state === 'approved' && attempts < RESOLVE_ATTEMPTS) {
      // The amount read now is the one funded next: it is checked again first.
      if (this.overRowLimit(tx)) return this.cancel(created, 'quote_rejected');
      await this.sleep(Math.min(10_000, 200 * 2 ** attempts));
      await this.fund(created, tx, attempts);
      return;
    }
    if (tx.state === 'approved') {
      // Attempts spent: the next scheduled read tries again, spaced by the polling budget.
      await store.observe(row.batch_id, row.line, toObservation(tx, 'polling'));
      await this.scheduleNextRead(created, true);
      return;
    }
    await this.apply(created, tx, 'polling');
  }

  /** When the balance runs out: nothing more of the batch is funded; what waits is cancelled or not sent. */
  private async stopFunding(batchId: string): Promise<void> {
    const { store } = this.deps;
    await store.stopFunding(batchId);
    for (let after = 0; ; ) {
      const rows = await store.rowsInPhases(batchId, ['ready'], after, 500);
      if (rows.length === 0) break;
      for (const row of rows) await store.movePhase(batchId, row.line, ['ready'], 'not_sent', 'insufficient_funds');
      after = (rows[rows.length - 1] as PipelineRow).line;
    }
    const waiting = await store.rowsInPhases(batchId, ['created'], 0, 100_000);
    await Promise.all(waiting.map((row) => this.cancel(row, 'insufficient_funds')));
  }

  /**
   * [1], [D11] Cancels on request (paybatch cancel): a row that is created or funded and
   * whose transaction may still be cancelled. Returns what was done.
   */
  async cancelOnRequest(row: PipelineRow): Promise<{ done: boolean; state: string; reason: string }> {
    const { store, client } = this.deps;
    const id = row.transaction_id as string;
    const unanswered = (error: unknown): { done: false; state: string; reason: string } => {
      if (error instanceof AuthenticationRefused || !(error instanceof OutcomeUnknown || error instanceof Retryable)) throw error;
      return { done: false, state: row.state ?? '', reason: `the service did not answer (${error.message}); nothing changed, try again` };
    };
    let tx: ServiceTransaction;
    try {
      tx = await client.getTransaction(id);
    } catch (error) {
      return unanswered(error);
    }
    await store.observe(row.batch_id, row.line, toObservation(tx, 'polling'));
    if (!tx.may_cancel) return { done: false, state: tx.state, reason: `the service does not allow it in state ${tx.state} (may_cancel is false)` };
    const from = row.phase;
    if (!(await store.movePhase(row.batch_id, row.line, ['created', 'funded'], 'cancelling', 'cancelled_on_request'))) {
      return { done: false, state: tx.state, reason: 'the row is being worked on; try again' };
    }
    const requested = async (): Promise<{ done: true; state: string; reason: string }> => {
      this.deps.log('cancel_requested', { batch: row.batch_id, line: row.line, transaction: id, state: tx.state });
      await this.scheduleNextRead({ ...row, phase: 'cancelling' }, false);
      return { done: true, state: tx.state, reason: 'cancellation requested' };
    };
    let failure: unknown;
    for (let attempt = 1; attempt <= RESOLVE_ATTEMPTS; attempt++) {
      try {
        await client.cancelTransaction(id);
        return await requested();
      } catch (error) {
        if (error instanceof Rejected) {
          // Refused (no longer cancellable): the row goes back to where it was.
          await store.movePhase(row.batch_id, row.line, ['cancelling'], from, row.outcome);
          return { done: false, state: tx.state, reason: error.message };
        }
        if (!(error instanceof OutcomeUnknown)) throw error;
        failure = error;
      }
      // [D11] Whether a DELETE whose answer was lost took effect, the transaction's state tells.
      const now = await client.getTransaction(id).catch(() => null);
      if (now && (now.state === 'canceled' || now.state === 'refunded')) return requested();
      await this.sleep(Math.min(10_000, 200 * 2 ** attempt));
    }
    await store.movePhase(row.batch_id, row.line, ['cancelling'], from, row.outcome);
    return unanswered(failure);
  }

  /** Cancels a created transaction we decided not to fund, and follows it to canceled. */
  private async cancel(row: PipelineRow, outcome: string): Promise<void> {
    const { store, client } = this.deps;
    if (!(await store.movePhase(row.batch_id, row.line, ['created', 'funding'], 'cancelling', outcome))) return;
    this.deps.log('cancelling', { batch: row.batch_id, line: row.line, transaction: row.transaction_id, outcome });
    try {
      await client.cancelTransaction(row.transaction_id as string);
    } catch (error) {
      if (!(error instanceof Rejected)) throw error;
      // Not cancellable any more (already cancelled, or expired): the next read tells.
    }
    await this.scheduleNextRead({ ...row, phase: 'cancelling' }, false);
  }

  private firstInterval(): number {
    const { first_window_ms, first_window_reads } = this.deps.engine.polling;
    return Math.ceil(first_window_ms / first_window_reads);
  }

  /** [D17] At most `first_window_reads` reads in the first window after creation, then one per later interval. */
  private async scheduleNextRead(row: PipelineRow, counted: boolean): Promise<void> {
    const { polling } = this.deps.engine;
    const now = this.deps.clock.now();
    const created = row.created_at ? Date.parse(row.created_at) : now;
    const reads = row.reads + (counted ? 1 : 0);
    const inFirstWindow = now < created + polling.first_window_ms && reads < polling.first_window_reads;
    await this.deps.store.scheduleRead(row.batch_id, row.line, now + (inFirstWindow ? this.firstInterval() : polling.later_interval_ms), counted);
  }
}
