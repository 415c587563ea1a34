/**
 * The chaos run's invariants, as pure checks over what the run collected: each
 * gives a figure for people and whether it holds. The run exits non-zero when
 * any does not.
 */

export interface Check {
  name: string;
  figure: string;
  ok: boolean;
}

/** A row as paybatch's database holds it at the end. */
export interface FinalRow {
  batch_id: string;
  line: number;
  external_id: string | null;
  transaction_id: string | null;
  phase: string;
  state: string | null;
  reads: number;
  created_at: string | null;
}

export interface LedgerEntry {
  kind: string;
  transaction_id: string | null;
  currency: string;
  amount: string;
}

export interface Collected {
  rowsIn: number;
  rowsInResults: number;
  /** external_id of every transaction the service holds. */
  serviceExternalIds: string[];
  ledger: LedgerEntry[];
  balancesBefore: Record<string, string>;
  balancesAfter: Record<string, string>;
  rows: FinalRow[];
  unexplainedDifferences: number;
  differences: number;
  seconds: number;
  polling: { first_window_ms: number; first_window_reads: number; later_interval_ms: number };
  endedAt: number;
}

const ATTENTION: ReadonlySet<string> = new Set(['manual', 'error', 'stuck', 'exception']);
const DONE_PHASES: ReadonlySet<string> = new Set(['final', 'invalid', 'refused', 'not_sent']);

/**
 * Final; or waiting for a person: funded (or created) in an attention state, or held before it was sent as a possible
 * duplicate payment (the same account and amount as a row of an earlier batch, chaos drops such files on purpose, or as
 * an earlier line of its own file).
 */
export function isSettledOrAttention(row: Pick<FinalRow, 'phase' | 'state' | 'transaction_id'>): boolean {
  return DONE_PHASES.has(row.phase) || isHeldDuplicate(row)
    || (row.state !== null && ATTENTION.has(row.state) && (row.phase === 'funded' || row.phase === 'created'));
}

/** Held as a possible duplicate, and never sent (no transaction at the service). */
const isHeldDuplicate = (row: Pick<FinalRow, 'phase' | 'state' | 'transaction_id'>): boolean => row.phase === 'duplicate_hold' && row.state === null && row.transaction_id === null;

/** The most reads one transaction may have had by `now` under the polling budget [D17], plus the reads around a restart. */
export function readBudget(createdAt: number, now: number, polling: Collected['polling'], restarts: number): number {
  const later = Math.max(0, now - createdAt - polling.first_window_ms);
  return polling.first_window_reads + Math.ceil(later / polling.later_interval_ms) + restarts + 2;
}

export function checkInvariants(c: Collected, restarts: number): Check[] {
  const checks: Check[] = [];
  checks.push({ name: 'rows in = rows in results', figure: `${c.rowsIn} in, ${c.rowsInResults} in results`, ok: c.rowsIn === c.rowsInResults && c.rowsIn > 0 });

  const perId = new Map<string, number>();
  for (const id of c.serviceExternalIds) perId.set(id, (perId.get(id) ?? 0) + 1);
  const mostCreated = Math.max(0, ...perId.values());
  checks.push({ name: 'transactions per external_id', figure: `${perId.size} external ids, at most ${mostCreated} transaction each`, ok: mostCreated <= 1 });

  const fundings = new Map<string, number>();
  for (const e of c.ledger) if (e.kind === 'debit' && e.transaction_id) fundings.set(e.transaction_id, (fundings.get(e.transaction_id) ?? 0) + 1);
  const mostFunded = Math.max(0, ...fundings.values());
  checks.push({ name: 'fundings per transaction (sandbox ledger)', figure: `${fundings.size} funded, at most ${mostFunded} debit each`, ok: mostFunded <= 1 });

  const currencies = new Set([...Object.keys(c.balancesBefore), ...Object.keys(c.balancesAfter)]);
  for (const currency of [...currencies].sort()) {
    let debits = 0n;
    let refunds = 0n;
    let adjustments = 0n;
    for (const e of c.ledger) {
      if (e.currency !== currency) continue;
      const size = BigInt(e.amount) < 0n ? -BigInt(e.amount) : BigInt(e.amount);
      if (e.kind === 'debit') debits += size;
      else if (e.kind === 'credit') refunds += size;
      else adjustments += BigInt(e.amount);
    }
    const before = BigInt(c.balancesBefore[currency] ?? '0');
    const after = BigInt(c.balancesAfter[currency] ?? '0');
    checks.push({
      name: `balance ${currency}: before - debits + refunds = after`,
      figure: `${before} - ${debits} + ${refunds}${adjustments !== 0n ? ` + ${adjustments} adjustments` : ''} = ${before - debits + refunds + adjustments}; after ${after}`,
      ok: before - debits + refunds + adjustments === after,
    });
  }

  const open = c.rows.filter((r) => !isSettledOrAttention(r));
  const attention = c.rows.filter((r) => (r.state !== null && ATTENTION.has(r.state) && !DONE_PHASES.has(r.phase)) || isHeldDuplicate(r)).length;
  checks.push({ name: 'every row final or in an attention state', figure: `${c.rows.length - open.length - attention} final, ${attention} in attention, ${open.length} neither${open.length > 0 ? ` (e.g. line ${open[0]?.line} ${open[0]?.phase}/${open[0]?.state})` : ''}`, ok: open.length === 0 });

  checks.push({ name: 'reconciliation report', figure: `${c.differences} differences, ${c.unexplainedDifferences} unexplained`, ok: c.unexplainedDifferences === 0 });

  // Rows with a transaction: a claimed row has a created_at (when paybatch asked) before it has one, or without one
  // (a create the service refused).
  const created = c.rows.filter((r) => r.transaction_id !== null && r.created_at !== null);
  const over = created.filter((r) => r.reads > readBudget(Date.parse(r.created_at as string), c.endedAt, c.polling, restarts));
  const totalReads = created.reduce((sum, r) => sum + r.reads, 0);
  const mostReads = Math.max(0, ...created.map((r) => r.reads));
  checks.push({
    name: 'reads per transaction within the polling budget',
    figure: `${created.length} transactions, ${(totalReads / Math.max(1, created.length)).toFixed(2)} reads each on average, at most ${mostReads}; ${over.length} over budget`,
    ok: over.length === 0,
  });
  checks.push({ name: 'time', figure: `${c.seconds.toFixed(1)} s`, ok: true });
  return checks;
}
