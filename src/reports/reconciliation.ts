/**
 * The reconciliation of a period (a day, or a whole batch), as data: what moved,
 * the totals per currency, and what needs a person. Pure: the rows come in, the
 * report goes out; the same rows give the same report, in the same order.
 *
 * Glossary: *debited* is what funding took from the balance (the input amount,
 * at funding); *refunded* what came back after a cancellation; *paid out* what
 * reached recipients (the output amount, when the service says paid); *in
 * flight* what was debited and has neither been paid out nor refunded yet.
 * All money is integer minor units (bigint) from the store to the file.
 */

import type { LedgerRow } from '../store/port.js';
import { REFUSAL_OUTCOMES, isAttentionState } from '../payout-states.js';

/** [from, to): ISO 8601 instants; null bounds for a whole batch. */
export interface Period {
  label: string;
  from: string | null;
  to: string | null;
}

export interface Movement {
  batch: string;
  line: number;
  external_id: string;
  transaction_id: string;
  state: string;
  funded_at: string;
  debited: bigint | null;
  input_currency: string;
  output_amount: bigint | null;
  output_currency: string;
  refunded: bigint | null;
  paid_at: string;
  refunded_at: string;
  state_reason_code: string;
}

export interface ExceptionLine {
  batch: string;
  line: number;
  external_id: string;
  transaction_id: string;
  kind: 'attention' | 'long_in_flight' | 'refused' | 'held';
  state: string;
  reason: string;
}

export interface CurrencyTotals {
  debited: bigint;
  refunded: bigint;
  net: bigint;
  in_flight: bigint;
}

export interface Reconciliation {
  period: Period;
  movements: Movement[];
  /** Per input currency. */
  input: Map<string, CurrencyTotals>;
  /** Per output currency: paid out in the period. */
  paidOut: Map<string, bigint>;
  /** Current state of every transaction that moved money in the period. */
  states: Map<string, number>;
  exceptions: ExceptionLine[];
}


const inPeriod = (at: string | null, p: Period): boolean => at !== null && (p.from === null || at >= p.from) && (p.to === null || at < p.to);
const atOrBefore = (at: string | null, p: Period): boolean => at !== null && (p.to === null || at < p.to);
const money = (v: string | null): bigint | null => (v === null ? null : BigInt(v));
const byKey = <T>(map: Map<string, T>): Map<string, T> => new Map([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export interface ReconcileOptions {
  /** A funded row not final after this many days is listed as an exception. */
  inFlightDays: number;
}

/** The totals of a period, added to row by row; `sorted()` gives them keyed in order, as the report lists them. */
export class ReconcileTotals {
  readonly input = new Map<string, CurrencyTotals>();
  readonly paidOut = new Map<string, bigint>();
  readonly states = new Map<string, number>();

  currency(currency: string): CurrencyTotals {
    let t = this.input.get(currency);
    if (!t) this.input.set(currency, (t = { debited: 0n, refunded: 0n, net: 0n, in_flight: 0n }));
    return t;
  }

  sorted(): Pick<Reconciliation, 'input' | 'paidOut' | 'states'> {
    return { input: byKey(this.input), paidOut: byKey(this.paidOut), states: byKey(this.states) };
  }
}

/** What one row adds to a period: its movement if it moved money in it, and its exceptions (in the report's order). */
export function reconcileRow(row: LedgerRow, period: Period, options: ReconcileOptions, totals: ReconcileTotals): { movement: Movement | null; exceptions: ExceptionLine[] } {
  const exceptions: ExceptionLine[] = [];
  let movement: Movement | null = null;
  const base = { batch: row.batch_id, line: row.line, external_id: row.external_id ?? '', transaction_id: row.transaction_id ?? '' };
  const debitedNow = inPeriod(row.funded_at, period);
  const refundedNow = inPeriod(row.refunded_at, period);
  const paidNow = inPeriod(row.paid_at, period);
  const currency = row.input_currency ?? '';
  if (debitedNow || refundedNow || paidNow) {
    const debited = debitedNow ? money(row.input_amount) : null;
    const refunded = refundedNow ? money(row.refunded_amount ?? row.input_amount) : null;
    // Written out, not spread from `base`: a literal that spreads one object and adds ten properties to it was built
    // property by property, about 5 µs a row, most of a million-row report's time in this function.
    movement = {
      batch: base.batch,
      line: base.line,
      external_id: base.external_id,
      transaction_id: base.transaction_id,
      state: row.state ?? '',
      funded_at: row.funded_at ?? '',
      debited,
      input_currency: currency,
      output_amount: paidNow ? money(row.output_amount) : null,
      output_currency: row.output_currency ?? '',
      refunded,
      paid_at: row.paid_at ?? '',
      refunded_at: row.refunded_at ?? '',
      state_reason_code: row.state_reason_code ?? '',
    };
    const t = totals.currency(currency);
    if (debited !== null) t.debited += debited;
    if (refunded !== null) t.refunded += refunded;
    t.net = t.debited - t.refunded;
    if (paidNow && row.output_currency && row.output_amount) totals.paidOut.set(row.output_currency, (totals.paidOut.get(row.output_currency) ?? 0n) + BigInt(row.output_amount));
    totals.states.set(row.state ?? 'unknown', (totals.states.get(row.state ?? 'unknown') ?? 0) + 1);
  }
  // Debited by the end of the period, and neither paid out nor refunded by then: still in flight.
  const inFlight = atOrBefore(row.funded_at, period) && !atOrBefore(row.paid_at, period) && !atOrBefore(row.refunded_at, period);
  if (inFlight && row.input_amount) totals.currency(currency).in_flight += BigInt(row.input_amount);

  if (isAttentionState(row.state) && (inFlight || debitedNow)) {
    exceptions.push(exceptionOf(base, 'attention', row.state, [row.state_reason_code, row.state_reason].filter(Boolean).join(': ')));
  } else if (inFlight && period.to !== null && row.funded_at !== null && row.funded_at < longAgo(period.to, options.inFlightDays)) {
    exceptions.push(exceptionOf(base, 'long_in_flight', row.state ?? '', `funded ${row.funded_at}, not final after ${options.inFlightDays} days`));
  }
  if (row.outcome && REFUSAL_OUTCOMES.has(row.outcome) && inPeriod(row.created_at, period)) {
    exceptions.push(exceptionOf(base, 'refused', row.state ?? row.phase, [row.outcome, row.outcome_detail].filter(Boolean).join(': ')));
  }
  // Held: an answer did not match what was asked; nothing more was done with the row.
  if (row.phase === 'held' && (period.from === null || inPeriod(row.created_at, period))) {
    exceptions.push(exceptionOf(base, 'held', row.outcome ?? 'held', row.outcome_detail ?? ''));
  }
  return { movement, exceptions: exceptions.sort(byKind) };
}

/** The instant `days` before `end`: asked only of a row still in flight, not made for each of a million rows. */
const longAgo = (end: string, days: number): string => new Date(Date.parse(end) - days * 86_400_000).toISOString();

/** An exception of a row, its fields written out (not spread from `base`: see the movement in reconcileRow). */
const exceptionOf = (base: Pick<ExceptionLine, 'batch' | 'line' | 'external_id' | 'transaction_id'>, kind: ExceptionLine['kind'], state: string, reason: string): ExceptionLine =>
  ({ batch: base.batch, line: base.line, external_id: base.external_id, transaction_id: base.transaction_id, kind, state, reason });

const byKind = (a: ExceptionLine, b: ExceptionLine): number => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0);

export function reconcile(rows: Iterable<LedgerRow>, period: Period, options: ReconcileOptions): Reconciliation {
  const movements: Movement[] = [];
  const exceptions: ExceptionLine[] = [];
  const totals = new ReconcileTotals();
  for (const row of rows) {
    const added = reconcileRow(row, period, options, totals);
    if (added.movement) movements.push(added.movement);
    for (const e of added.exceptions) exceptions.push(e);
  }
  const order = (a: { batch: string; line: number }, b: { batch: string; line: number }): number => (a.batch < b.batch ? -1 : a.batch > b.batch ? 1 : a.line - b.line);
  movements.sort(order);
  exceptions.sort((a, b) => order(a, b) || byKind(a, b));
  return { period, movements, ...totals.sorted(), exceptions };
}
