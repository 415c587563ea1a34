/**
 * The simulated payout service: every operation of section 4, each applied in
 * one SQLite transaction, with its events published only after the commit.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { CorridorConfig, SandboxConfig } from './config.js';
import type { EventSink, ServiceEvent } from './events.js';
import { applySenderStep, applyTransactionStep, cancelRequested, fundedTransaction, newSenderState } from './lifecycle.js';
import type { SenderRecord, SenderState, TransactionRecord, TransactionState } from './model.js';
import { mayCancel, SENDER_STATES, senderView, TRANSACTION_STATES, transactionView, UNFUNDED } from './model.js';
import { SENDER_STOPPED_STATES } from '../payout-states.js';
import { currencyDecimals, inputAmountFor } from './money.js';
import { outcomeFor } from './outcomes.js';
import type { Random } from './random.js';
import type { ReasonCode } from './reason-codes.js';
import type { Reply } from './reply.js';
import { failure, invalid, reply } from './reply.js';
import type { SandboxStore } from './store.js';
import type { CorridorLookup } from './validation.js';
import { isAlpha3Country, validateCreate } from './validation.js';

export interface ServiceDeps {
  store: SandboxStore;
  config: SandboxConfig;
  clock: Clock;
  random: Random;
  events: EventSink;
}

export type CorridorRecord = CorridorConfig & { active: boolean };

const BLOCKED_SENDER: ReadonlySet<SenderState> = new Set(SENDER_STOPPED_STATES);
const STEP_BATCH = 500;
const MAX_STEPS_PER_RECORD = 16;

export class SandboxService implements CorridorLookup {
  private readonly store: SandboxStore;
  private readonly config: SandboxConfig;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly events: EventSink;
  private pending: ServiceEvent[] = [];

  constructor(deps: ServiceDeps) {
    ({ store: this.store, config: this.config, clock: this.clock, random: this.random, events: this.events } = deps);
    if (this.store.fresh) this.seed();
  }

  private seed(): void {
    this.store.atomic(() => {
      for (const [currency, amount] of Object.entries(this.config.balances)) {
        this.store.moveBalance(this.now(), 'adjustment', currency, BigInt(amount), null);
      }
    });
  }

  /** Sandbox time: the injected clock plus whatever the operator advanced. */
  now(): number {
    return this.clock.now() + (this.store.setting<number>('clock_offset_ms') ?? 0);
  }

  /** Runs `work` atomically, then publishes the events it raised. */
  private commit<T>(work: () => T): T {
    this.pending = [];
    let result: T;
    try {
      result = this.store.atomic(work);
    } catch (error) {
      this.pending = [];
      throw error;
    }
    const events = this.pending;
    this.pending = [];
    for (const event of events) this.events.publish(event);
    return result;
  }

  private raiseTransaction(tx: TransactionRecord, states: readonly TransactionState[], sender?: SenderRecord): void {
    const wanted = (type: string): boolean => this.events.wants(type);
    if (!states.some((s) => wanted(`transaction.${s}`) || (s === 'paid' && wanted('transaction.paid_out')))) return;
    const data = this.view(tx, sender);
    for (const state of states) {
      this.pending.push({ eventType: `transaction.${state}`, objectId: tx.id, data });
      if (state === 'paid') this.pending.push({ eventType: 'transaction.paid_out', objectId: tx.id, data });
    }
  }

  private raiseSender(sender: SenderRecord): void {
    if (!this.events.wants(`sender.${sender.state}`)) return;
    this.pending.push({ eventType: `sender.${sender.state}`, objectId: sender.id, data: senderView(sender) });
  }

  private view(tx: TransactionRecord, known?: SenderRecord): Record<string, unknown> {
    const sender = known ?? this.store.sender(tx.sender_id);
    if (!sender) throw new Error(`sender ${tx.sender_id} of ${tx.id} is missing`);
    return transactionView(tx, sender);
  }

  // ---- corridors [D12]

  corridors(): CorridorRecord[] {
    const overrides = this.store.setting<Record<string, boolean>>('corridor_active') ?? {};
    return this.config.corridors.map((c) => ({ ...c, active: overrides[c.id] ?? c.active ?? true }));
  }

  forCountry(country: string): CorridorRecord[] {
    if (!isAlpha3Country(country)) return [];
    return this.corridors().filter((c) => c.countries === '*' || c.countries.includes(country));
  }

  hasRate(input: string, output: string): boolean {
    return this.config.rates[`${input}/${output}`] !== undefined;
  }

  listCorridors(country: string): Reply {
    const records = this.forCountry(country.toUpperCase()).map((c) => ({
      id: c.id,
      country_code: country.toUpperCase(),
      type: c.type,
      input_currency_codes: c.input_currency_codes,
      output_currency_codes: c.output_currency_codes,
      active: c.active,
    }));
    return reply(200, records);
  }

  // ---- transactions [4]

  createTransaction(body: unknown): Reply {
    const today = new Date(this.now()).toISOString().slice(0, 10);
    const checked = validateCreate(body, this, today);
    if (checked.errors) return invalid(checked.errors);
    const request = checked.request;
    return this.commit(() => {
      const existing = this.store.transactionByExternalId(request.external_id);
      if (existing) {
        return invalid({ external_id: ['has already been taken'] }, { existing: { transaction: this.view(existing) } });
      }
      const at = this.now();
      const sender = this.upsertSender(request.sender, at);
      const rate = this.config.rates[`${request.input_currency_code}/${request.output_currency_code}`] as string;
      const inputAmount = inputAmountFor(
        BigInt(request.output_amount_in_cents),
        currencyDecimals(request.output_currency_code) as number,
        currencyDecimals(request.input_currency_code) as number,
        rate,
      );
      const blocked = BLOCKED_SENDER.has(sender.state);
      const tx: TransactionRecord = {
        id: `tr_${randomUUID().replace(/-/g, '')}`,
        external_id: request.external_id,
        type: request.type,
        state: blocked ? 'canceled' : sender.state === 'approved' ? 'approved' : 'initial',
        reason_code: blocked ? 'sender_rejected' : null,
        input_amount: inputAmount.toString(),
        input_currency: request.input_currency_code,
        output_amount: BigInt(request.output_amount_in_cents).toString(),
        output_currency: request.output_currency_code,
        sender_id: sender.id,
        recipient: request.recipient,
        outcome: outcomeFor(request.type, request.recipient),
        created_at: at,
        updated_at: at,
        expires_at: at + this.config.funding_window_ms,
        funded_at: null,
        paid_at: null,
        cancel_requested_at: null,
        refunded_amount: null,
        retries: 0,
        next_step: blocked ? null : 'expire',
        next_at: blocked ? null : at + this.config.funding_window_ms,
      };
      this.store.insertTransaction(tx);
      this.raiseTransaction(tx, [tx.state], sender);
      return { ...reply(201, this.view(tx, sender)), resettable: 'create' as const };
    });
  }

  /** [2.2] Senders are kept by external_id; a later transaction updates the details. */
  private upsertSender(details: Record<string, string>, at: number): SenderRecord {
    const externalId = details.external_id as string;
    const { external_id: _ignored, ...rest } = details;
    const known = this.store.senderByExternalId(externalId);
    if (known) {
      if (sameDetails(known.details, rest)) return known;
      const updated = { ...known, details: rest, updated_at: at };
      this.store.saveSender(updated);
      return updated;
    }
    const sender: SenderRecord = {
      id: `se_${randomUUID().replace(/-/g, '')}`,
      external_id: externalId,
      details: rest,
      created_at: at,
      updated_at: at,
      ...newSenderState(details, at, this.config.kyc),
    };
    this.store.saveSender(sender);
    this.raiseSender(sender);
    return sender;
  }

  findTransactions(externalId: string): Reply {
    const tx = this.store.transactionByExternalId(externalId);
    return reply(200, tx ? [this.view(tx)] : []);
  }

  getTransaction(id: string): Reply {
    const tx = this.store.transaction(id);
    return tx ? reply(200, this.view(tx)) : failure(404, `transaction ${id} not found`);
  }

  /** [D10] Funds exactly once: every refusal is a 422 that debits nothing. */
  fundTransaction(id: string, body: unknown): Reply {
    return this.commit(() => {
      const tx = this.store.transaction(id);
      if (!tx) return failure(404, `transaction ${id} not found`);
      const guard = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
      const errors: Record<string, string[]> = {};
      if (guard.input_amount_in_cents !== undefined && guard.input_amount_in_cents !== tx.input_amount) {
        errors.input_amount_in_cents = [`does not match the transaction's input amount ${tx.input_amount}`];
      }
      if (guard.input_currency !== undefined && guard.input_currency !== tx.input_currency) {
        errors.input_currency = [`does not match the transaction's input currency ${tx.input_currency}`];
      }
      if (tx.funded_at !== null) errors.state = ['the transaction is already funded'];
      else if (tx.cancel_requested_at !== null) errors.state = ['the transaction is being cancelled'];
      else if (tx.state !== 'approved') errors.state = [`a transaction in state ${tx.state} cannot be funded`];
      if (Object.keys(errors).length > 0) return invalid(errors);
      const at = this.now();
      const available = this.store.balance(tx.input_currency);
      if (available < BigInt(tx.input_amount)) {
        return invalid({ balance: [`insufficient ${tx.input_currency} balance: ${available} available, ${tx.input_amount} needed`] });
      }
      this.store.moveBalance(at, 'debit', tx.input_currency, -BigInt(tx.input_amount), tx.id);
      const funded = fundedTransaction(tx, at, this.config.payout);
      this.store.updateTransaction(funded);
      this.raiseTransaction(funded, [funded.state]);
      return { ...reply(200, this.view(funded)), resettable: 'fund' as const };
    });
  }

  /** [D11] 202 with the transaction as it stands; the cancellation proceeds asynchronously. */
  cancelTransaction(id: string): Reply {
    return this.commit(() => {
      const tx = this.store.transaction(id);
      if (!tx) return failure(404, `transaction ${id} not found`);
      if (!mayCancel(tx)) return invalid({ state: [`a transaction in state ${tx.state} cannot be cancelled`] });
      const requested = tx.cancel_requested_at === null ? cancelRequested(tx, this.now(), this.config.payout) : tx;
      this.store.updateTransaction(requested);
      return reply(202, this.view(requested));
    });
  }

  // ---- time

  /** Applies every step due by now, oldest first; returns how many were applied. */
  tick(): number {
    let applied = 0;
    for (;;) {
      const count = this.commit(() => this.applyDueSteps(this.now()));
      applied += count;
      if (count === 0) return applied;
    }
  }

  private applyDueSteps(now: number): number {
    const senders = this.store.dueSenders(now, STEP_BATCH);
    for (const sender of senders) {
      const moved = applySenderStep(sender, sender.next_at as number, this.config.kyc);
      this.saveSenderState(moved);
    }
    const transactions = this.store.dueTransactions(now, STEP_BATCH);
    for (const due of transactions) {
      // Steps due at the same moment (received, then processing) are applied in
      // memory and written once; each still raises its own event with its own state.
      let tx = due;
      for (let steps = 0; tx.next_at !== null && tx.next_at <= now && steps < MAX_STEPS_PER_RECORD; steps++) {
        const result = applyTransactionStep(tx, tx.next_at, this.config.payout, this.random);
        if (result.credit) this.store.moveBalance(result.tx.updated_at, 'credit', tx.input_currency, BigInt(result.credit), tx.id);
        tx = result.tx;
        this.raiseTransaction(tx, result.entered);
      }
      this.store.updateTransaction(tx);
    }
    return senders.length + transactions.length;
  }

  /**
   * Saves a sender's new state and releases or stops the transactions waiting on it [3.3].
   * A KYC step is stamped with the moment it was due, which may precede a transaction
   * created before the tick that applied it: the change is never dated before the
   * transaction's own last change (its updated_at never goes back, or a client that
   * orders what it hears by updated_at would take the news for old).
   */
  private saveSenderState(sender: SenderRecord): void {
    this.store.saveSender(sender);
    this.raiseSender(sender);
    const changedAt = (tx: TransactionRecord): number => Math.max(tx.updated_at, sender.updated_at);
    if (sender.state === 'approved') {
      for (const tx of this.store.transactionsOfSenderInState(sender.id, 'initial')) {
        const approved = { ...tx, state: 'approved' as const, updated_at: changedAt(tx) };
        this.store.updateTransaction(approved);
        this.raiseTransaction(approved, ['approved']);
      }
    } else if (BLOCKED_SENDER.has(sender.state)) {
      for (const state of UNFUNDED) {
        for (const tx of this.store.transactionsOfSenderInState(sender.id, state)) {
          this.forceState(tx, 'canceled', 'sender_rejected', changedAt(tx));
        }
      }
    }
  }

  private forceState(tx: TransactionRecord, state: TransactionState, reason: ReasonCode | null, at: number): TransactionRecord {
    const forced: TransactionRecord = { ...tx, state, reason_code: reason, updated_at: at, next_step: null, next_at: null };
    this.store.updateTransaction(forced);
    this.raiseTransaction(forced, [state]);
    return forced;
  }

  // ---- operator controls (outside the service interface)

  advanceTime(ms: number): number {
    this.store.setSetting('clock_offset_ms', (this.store.setting<number>('clock_offset_ms') ?? 0) + ms);
    return this.tick();
  }

  setBalance(currency: string, amount: bigint): void {
    this.store.atomic(() => {
      const delta = amount - this.store.balance(currency);
      if (delta !== 0n) this.store.moveBalance(this.now(), 'adjustment', currency, delta, null);
    });
  }

  setCorridorActive(id: string, active: boolean): boolean {
    if (!this.config.corridors.some((c) => c.id === id)) return false;
    const overrides = this.store.setting<Record<string, boolean>>('corridor_active') ?? {};
    this.store.setSetting('corridor_active', { ...overrides, [id]: active });
    return true;
  }

  /** Sets a transaction's state by hand, e.g. to make a reconciliation difference on purpose. */
  forceTransactionState(id: string, state: string): Reply {
    if (!(TRANSACTION_STATES as readonly string[]).includes(state)) return invalid({ state: [`must be one of ${TRANSACTION_STATES.join(', ')}`] });
    return this.commit(() => {
      const tx = this.store.transaction(id);
      if (!tx) return failure(404, `transaction ${id} not found`);
      return reply(200, this.view(this.forceState(tx, state as TransactionState, 'forced_by_operator', this.now())));
    });
  }

  setSenderState(externalId: string, state: string): Reply {
    if (!(SENDER_STATES as readonly string[]).includes(state)) return invalid({ state: [`must be one of ${SENDER_STATES.join(', ')}`] });
    return this.commit(() => {
      const sender = this.store.senderByExternalId(externalId);
      if (!sender) return failure(404, `sender ${externalId} not found`);
      const moved: SenderRecord = { ...sender, state: state as SenderState, updated_at: this.now(), next_step: null, next_at: null };
      this.saveSenderState(moved);
      return reply(200, senderView(moved));
    });
  }
}

function sameDetails(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
