/**
 * The checks of a reconciliation: paybatch's own ledger against the service's
 * current state of every unsettled transaction, and against the service's
 * record of debits and credits where it offers one (the sandbox's ledger does).
 * Pure: every difference is listed with both sides.
 */
import type { ServiceTransaction } from '../api/answers.js';
import type { LedgerRow } from '../store/port.js';
import { isNewer, trustedUpdatedAt } from '../payout-states.js';

export interface Difference {
  batch: string;
  line: number;
  external_id: string;
  transaction_id: string;
  check: 'state' | 'input_amount' | 'output_amount' | 'not_at_service' | 'ledger_debit' | 'ledger_credit' | 'not_in_paybatch' | 'answer_mismatch' | 'paid_twice';
  paybatch: string;
  service: string;
  /** Why the difference is expected, or '' when it is not: those need a person. */
  explained: string;
}

/** One entry of the service's balance ledger: debits negative, credits positive (minor units). */
export interface ServiceLedgerEntry {
  kind: string;
  transaction_id: string | null;
  currency: string;
  amount: string;
}

const BEHIND = 'the service moved on after paybatch last heard; paybatch learns it by webhook or its next read';

/**
 * A row's difference, its fields written out: a literal that spread the row's place and added the rest was built
 * property by property, some microseconds a row (a million-row report has a difference a row at worst).
 */
const differenceOf = (row: LedgerRow, check: Difference['check'], paybatch: string, service: string, explained: string): Difference =>
  ({ batch: row.batch_id, line: row.line, external_id: row.external_id ?? '', transaction_id: row.transaction_id ?? '', check, paybatch, service, explained });

/**
 * Each unsettled row against what the service says now (`null`: the service does not know the id). A state that
 * differs is explained when the service's is newer than the one stored, by the engine's one rule (isNewer), `now`
 * bounding how far ahead the service's clock is trusted.
 */
export function compareWithService(rows: readonly LedgerRow[], answers: ReadonlyMap<string, ServiceTransaction | null>, now: number): Difference[] {
  const differences: Difference[] = [];
  for (const row of rows) {
    if (!row.transaction_id || !answers.has(row.transaction_id)) continue;
    const tx = answers.get(row.transaction_id) ?? null;
    if (tx === null) {
      differences.push(differenceOf(row, 'not_at_service', row.state ?? '', 'not found', ''));
      continue;
    }
    if (tx.state !== row.state) {
      const newer = isNewer({ state: row.state, at: row.observed_at, funded: row.funded_at !== null }, { state: tx.state, at: trustedUpdatedAt(tx.updated_at, now) });
      differences.push(differenceOf(row, 'state', row.state ?? '', tx.state, newer ? BEHIND : ''));
    }
    if (row.input_amount !== null && tx.input_amount_in_cents !== null && tx.input_amount_in_cents !== row.input_amount) {
      differences.push(differenceOf(row, 'input_amount', `${row.input_amount} ${row.input_currency ?? ''}`, `${tx.input_amount_in_cents} ${tx.input_currency ?? ''}`, ''));
    }
    if (row.output_amount !== null && tx.output_amount_in_cents !== null && tx.output_amount_in_cents !== row.output_amount) {
      differences.push(differenceOf(row, 'output_amount', `${row.output_amount} ${row.output_currency ?? ''}`, `${tx.output_amount_in_cents} ${tx.output_currency ?? ''}`, ''));
    }
  }
  return differences;
}

/**
 * Each transaction's debits and credits in paybatch's ledger (the input amount
 * once funded, the refund once refunded) against the service's ledger entries for
 * it. `strangers` are the service's entries, within the period, for transactions
 * paybatch never created: each is a difference too.
 */
export function compareWithLedger(rows: readonly LedgerRow[], entries: readonly ServiceLedgerEntry[], strangers: readonly ServiceLedgerEntry[] = [], behind: ReadonlySet<string> = new Set()): Difference[] {
  // Amounts are compared in one currency: a transaction's money is summed per currency, and an entry in another
  // currency than the one paybatch funded it in is a difference of its own (100000 EUR is not 100000 USD).
  const inCurrency = (transactionId: string, currency: string): string => `${transactionId}\u0000${currency}`;
  const debits = new Map<string, bigint>();
  const credits = new Map<string, bigint>();
  const fundedIn = new Map(rows.flatMap((row) => (row.transaction_id ? [[row.transaction_id, row.input_currency ?? ''] as const] : [])));
  /** A transaction's entries in another currency than paybatch funded it in, said beside its difference. */
  const elsewhere = new Map<string, string>();
  const differences: Difference[] = [];
  for (const entry of entries) {
    if (!entry.transaction_id) continue;
    // Sizes, whatever sign the service writes them with.
    const size = BigInt(entry.amount) < 0n ? -BigInt(entry.amount) : BigInt(entry.amount);
    const key = inCurrency(entry.transaction_id, entry.currency);
    if (entry.kind === 'debit') debits.set(key, (debits.get(key) ?? 0n) + size);
    if (entry.kind === 'credit') credits.set(key, (credits.get(key) ?? 0n) + size);
    const ours = fundedIn.get(entry.transaction_id);
    if (ours !== undefined && entry.currency !== ours) elsewhere.set(entry.transaction_id, `${elsewhere.get(entry.transaction_id) ?? ''}; ${entry.kind} ${size} ${entry.currency}`);
  }
  for (const row of rows) {
    if (!row.transaction_id) continue;
    const debited = row.funded_at !== null && row.input_amount !== null ? BigInt(row.input_amount) : 0n;
    const refunded = row.refunded_at !== null ? BigInt(row.refunded_amount ?? row.input_amount ?? '0') : 0n;
    const currency = row.input_currency ?? '';
    const serviceDebited = debits.get(inCurrency(row.transaction_id, currency)) ?? 0n;
    const serviceCredited = credits.get(inCurrency(row.transaction_id, currency)) ?? 0n;
    // Money that moved with a state paybatch has not heard of yet is expected to differ.
    const explained = behind.has(row.transaction_id) ? 'follows from the state the service moved on to' : '';
    const other = elsewhere.get(row.transaction_id) ?? '';
    if (debited !== serviceDebited) differences.push(differenceOf(row, 'ledger_debit', `${debited} ${currency}`, `${serviceDebited} ${currency}${other}`, explained));
    if (refunded !== serviceCredited) differences.push(differenceOf(row, 'ledger_credit', `${refunded} ${currency}`, `${serviceCredited} ${currency}${other}`, explained));
  }
  for (const entry of strangers) {
    differences.push({ batch: '', line: 0, external_id: '', transaction_id: entry.transaction_id ?? '', check: 'not_in_paybatch', paybatch: 'unknown', service: `${entry.kind} ${entry.amount} ${entry.currency}`, explained: '' });
  }
  return differences;
}

/**
 * Rows held because an answer did not match what was asked: each field that
 * differed, with both sides, and never explained: a person must look.
 */
export function heldDifferences(rows: readonly LedgerRow[]): Difference[] {
  const differences: Difference[] = [];
  for (const row of rows) {
    if (row.phase !== 'held' || !row.errors) continue;
    for (const issue of JSON.parse(row.errors) as { code: string; column: string; asked?: string; answered?: string; message: string }[]) {
      if (issue.code !== 'answer_mismatch') continue;
      differences.push(differenceOf(row, 'answer_mismatch', `asked ${issue.column} ${issue.asked ?? ''}`.trim(), `answered ${issue.column} ${issue.answered ?? issue.message}`, ''));
    }
  }
  return differences;
}

/** Transactions the service is ahead on (an explained state difference). */
export function behindOn(differences: readonly Difference[]): Set<string> {
  return new Set(differences.filter((d) => d.check === 'state' && d.explained !== '').map((d) => d.transaction_id));
}

export function sortDifferences(differences: Difference[]): Difference[] {
  const key = (d: Difference): string => `${d.batch}\u0000${String(d.line).padStart(10, '0')}\u0000${d.transaction_id}\u0000${d.check}`;
  return differences.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
