/**
 * The possible-duplicate check of a batch being taken in, before it is
 * accepted (so before anything of it can be sent): each sendable row's
 * recipient account, recorded by the store as the row was stored, has its
 * twins found by the store, and what to do decided by decideDuplicate
 * (duplicates.ts). Rows to hold are moved to duplicate_hold with the reason;
 * rows only warned about are listed.
 */
import type { PayoutRequest } from '../api/payout-request.js';
import type { BatchConfig } from '../config/config.js';
import { recipientKey } from '../validate/recipient-key.js';
import type { DuplicateStore, PossibleDuplicate, RecipientEntry } from '../store/port.js';
import type { Candidate } from './duplicates.js';
import { decideDuplicate, describeDecision, windowStart } from './duplicates.js';
import { isBeforeSending } from '../payout-states.js';

/** Lines looked at per round: one query for their twins in other batches, one for those in the file itself. */
const CHUNK = 1000;

/** What the check asks of the store. */
export type ScreenStore = Pick<DuplicateStore, 'indexRecipients' | 'lastRecipientLine' | 'sameBatchTwins' | 'batchTwins' | 'rowsAtLines' | 'recordPossibleDuplicates'>;

export type Finding = Omit<PossibleDuplicate, 'allowed_by' | 'allowed_reason' | 'allowed_at'>;

export interface ScreenOutcome {
  held: number;
  warned: number;
}

/**
 * The earlier lines of a file not taken in yet (validate, preview), met in line order: for each row, the first earlier
 * line paying the same account the same amount in the same currency (the one sent), as a twin, or null. Kept across
 * the chunks of a file; intake asks the store instead (sameBatchTwins), in constant memory.
 */
export class SameFileTwins {
  private readonly first = new Map<string, { line: number; external_id: string | null }>();

  constructor(private readonly batchId: string, private readonly at: string) {}

  /** The twins of these rows (in line order) within the file so far: (line, twin) pairs, as the store's are. */
  of(rows: readonly FileEntry[]): (Candidate & { of_line: number })[] {
    const found: (Candidate & { of_line: number })[] = [];
    for (const row of rows) {
      const key = JSON.stringify([row.key, row.currency, row.amount]);
      const earlier = this.first.get(key);
      if (!earlier) this.first.set(key, { line: row.line, external_id: row.external_id });
      else found.push({ of_line: row.line, batch_id: this.batchId, line: earlier.line, external_id: earlier.external_id, phase: 'ready', state: null, at: this.at, same_file: true });
    }
    return found;
  }
}

/** Decides, purely, for a chunk of rows, given the twins found (any order): what is to be recorded. */
export function findingsOf(batchId: string, rows: readonly { line: number; external_id: string | null }[], twins: readonly (Candidate & { of_line: number })[],
  policy: BatchConfig['on_duplicate']): Finding[] {
  const byLine = new Map<number, Candidate[]>();
  for (const { of_line, ...twin } of twins) byLine.set(of_line, [...(byLine.get(of_line) ?? []), twin]);
  const found: Finding[] = [];
  for (const row of rows) {
    const decision = decideDuplicate(byLine.get(row.line) ?? [], policy, null);
    if (decision.action === 'send') continue;
    found.push({ batch_id: batchId, line: row.line, external_id: row.external_id, twin: decision.twin, action: decision.action, detail: describeDecision(decision) });
  }
  return found;
}

/**
 * The check of a batch whose rows are all stored. Each sendable row's account was recorded with it as it was stored
 * (addRows; a row made invalid after lost its entry), so the check reads no row back: it writes the batch's accounts
 * by payment, looks for twins by ranges of lines there, and reads only the rows found with one, to know they are
 * still sendable and their external ids. Run again after a crash, it writes nothing twice and finds the same.
 */
export async function screenDuplicates(batchId: string, receivedAt: number, deps: { store: ScreenStore; batch: Pick<BatchConfig, 'duplicate_window' | 'on_duplicate'> }): Promise<ScreenOutcome> {
  // The batch's accounts where twins are looked for, in one pass in their order, its rows all stored: for this check
  // (twins within the file are found there too), and for later files, with or without a window here.
  await deps.store.indexRecipients(batchId);
  const since = windowStart(receivedAt, deps.batch.duplicate_window);
  const outcome: ScreenOutcome = { held: 0, warned: 0 };
  // With no window, nothing is looked for; the accounts are recorded all the same, for later files to be checked against.
  if (since === null) return outcome;
  const fileAt = new Date(receivedAt).toISOString();
  const last = await deps.store.lastRecipientLine(batchId);
  for (let after = 0; after < last; after += CHUNK) {
    const upto = Math.min(after + CHUNK, last);
    // Twins in the file itself from the store's index too, not from a map of every account of the file: a file of a
    // million rows is screened in constant memory (docs/performance.md).
    const inFile = (await deps.store.sameBatchTwins(batchId, after, upto)).map((t): Candidate & { of_line: number } => ({
      of_line: t.of_line, batch_id: batchId, line: t.line, external_id: t.external_id, phase: 'ready', state: null, at: fileAt, same_file: true,
    }));
    const twins = [...await deps.store.batchTwins(batchId, after, upto, since), ...inFile];
    if (twins.length === 0) continue;
    // Only the rows still before sending are screened ('ready', or 'checking' until the acceptance: every row, on PostgreSQL).
    const lines = [...new Set(twins.map((t) => t.of_line))].sort((a, b) => a - b);
    const rows = (await deps.store.rowsAtLines(batchId, lines)).filter((row) => isBeforeSending(row.phase));
    const found = findingsOf(batchId, rows, twins, deps.batch.on_duplicate);
    if (found.length > 0) await deps.store.recordPossibleDuplicates(found);
    for (const f of found) outcome[f.action === 'hold' ? 'held' : 'warned'] += 1;
  }
  return outcome;
}

/** A row of a file not taken in yet, as the check needs it. */
export type FileEntry = RecipientEntry & { external_id: string | null };

/** The entry of a valid row's request; null when it names no account. */
export function fileEntry(line: number, request: PayoutRequest): FileEntry | null {
  const key = recipientKey(request);
  return key === null ? null : { line, external_id: request.external_id, key, currency: request.output_currency_code, amount: request.output_amount_in_cents };
}

/** A file not taken in yet (validate, preview): its rows' twins as they stand now, decided as intake would. Reads only. */
export async function duplicatesOfFile(entries: readonly FileEntry[],
  deps: { store: Pick<DuplicateStore, 'twinsOf'>; batch: Pick<BatchConfig, 'duplicate_window' | 'on_duplicate'>; now: number }): Promise<Finding[]> {
  const since = windowStart(deps.now, deps.batch.duplicate_window);
  if (since === null) return [];
  const found: Finding[] = [];
  const sameFile = new SameFileTwins('', new Date(deps.now).toISOString());
  for (const entry of entries) {
    const twins = await deps.store.twinsOf({ batch_id: '', line: entry.line, key: entry.key, currency: entry.currency, amount: entry.amount }, since, 20);
    found.push(...findingsOf('', [entry], [...twins.map((t) => ({ ...t, of_line: entry.line })), ...sameFile.of([entry])], deps.batch.on_duplicate));
  }
  return found;
}
