/**
 * A decision applied in SQLite: by compare-and-set on the row's revision
 * (STYLE 13), in the next group commit, with the funding reservation checked in
 * the same transaction. The rules themselves (which observation is newer, what
 * to do next, whether a budget is exceeded) are not here.
 */
import type { CommitOutcome, ObservationSource, RowChanges, RowPatch, RowSeen } from '../port.js';
import { CHANGEABLE, CHANGE_COUNTER, PIPELINE_SQL, storedValue } from '../queries/pipeline.js';
import { appendAuditNow } from './audit.js';
import { reservationRefused } from './budget.js';
import type { GroupHooks, SqliteConnection } from './connection.js';

/**
 * What a commit takes from the row as it stands (RowSeen): the columns the indexes of rows depend on, and the state.
 * Not the next read's time, which a scheduled read moves without a revision of its own, and which nothing decides from.
 */
const SEEN_COLUMNS = ['phase', 'state', 'transaction_id', 'funded_at'] as const;
type SeenColumns = { [column in (typeof SEEN_COLUMNS)[number]]: RowSeen[column] };
const isSeen = (column: string): column is keyof SeenColumns => (SEEN_COLUMNS as readonly string[]).includes(column);
/** The row still holds what the commit took from it. */
const AS_SEEN = SEEN_COLUMNS.map((column) => `${column} IS ?`).join(' AND ');
/** The caller's copy, its missing values as the database gives them (null). */
const asStored = (seen: RowSeen): SeenColumns => ({
  phase: seen.phase, state: seen.state ?? null, transaction_id: seen.transaction_id ?? null, funded_at: seen.funded_at ?? null,
});

const SOURCES = Object.keys(CHANGE_COUNTER) as ObservationSource[];
/** A group's counts of state changes added to one batch's, in the order of SOURCES. */
const ADD_CHANGES = `UPDATE batches SET ${SOURCES.map((source) => `${CHANGE_COUNTER[source]} = ${CHANGE_COUNTER[source]} + ?`).join(', ')} WHERE id = ?`;

/** State changes learned in the group commit under way, by batch and source: one update a batch for the group, not one a row. */
export class LearnedChanges implements GroupHooks {
  private counts = new Map<string, Record<ObservationSource, number>>();

  constructor(private readonly c: SqliteConnection) {
    c.onGroup(this);
  }

  count(batchId: string, source: ObservationSource): void {
    let counts = this.counts.get(batchId);
    if (!counts) {
      counts = { webhook: 0, polling: 0, answer: 0 };
      this.counts.set(batchId, counts);
    }
    counts[source] += 1;
  }

  end(): void {
    if (this.counts.size === 0) return;
    const learned = this.counts;
    this.counts = new Map();
    for (const [batchId, counts] of learned) this.c.sql(ADD_CHANGES).run(...SOURCES.map((source) => counts[source]), batchId);
  }

  undone(): void {
    this.counts = new Map();
  }
}

export async function commitRow(c: SqliteConnection, learned: LearnedChanges, batchId: string, line: number, revision: number, patch: RowPatch, seen?: RowSeen): Promise<CommitOutcome> {
  // Rows in flight together commit together (see atomicInGroup); each is still compared and set on its own.
  return c.atomicInGroup((): CommitOutcome => {
    // The row as the caller read it, or as read here. What is taken from it is checked by the update itself (its
    // WHERE), so a caller's copy that is out of date moves nothing: the commit is refused as moved, as if read here.
    const before = seen ? asStored(seen) : readSeen(c, batchId, line, revision);
    if (!before) return { kind: 'moved' };
    const { changes } = patch;
    const refusal = refused(c, batchId, line, changes, before, patch.reserve);
    // A refusal is for the row as it stands: one that has moved (or is not as the caller saw it) is told so first.
    if (refusal) return seen && !stillAsSeen(c, batchId, line, revision, before) ? { kind: 'moved' } : refusal;
    if (!update(c, batchId, line, revision, changes, before, patch.countRead === true)) return { kind: 'moved' };
    for (const audit of patch.audits ?? []) {
      appendAuditNow(c, { at: audit.at, actor: audit.actor ?? 'paybatch', action: audit.action, subject: `${batchId} line ${line}`, details: audit.details });
    }
    // Counted last, once nothing here can fail: the count is applied with the group (LearnedChanges.end), or not at all.
    if (patch.learned && changes.state !== undefined && changes.state !== before.state) learned.count(batchId, patch.learned);
    return { kind: 'applied' };
  });
}

/** Why the change may not be made: its transaction is another row's, or the reservation for funding is refused. */
function refused(c: SqliteConnection, batchId: string, line: number, changes: RowChanges, before: SeenColumns, reserve: RowPatch['reserve']): CommitOutcome | null {
  // A row that already holds this transaction was checked when it took it.
  if (changes.transaction_id && changes.transaction_id !== before.transaction_id) {
    // One transaction, one row: an answer naming a transaction another row holds is not adopted twice.
    const other = c.sql(PIPELINE_SQL.otherHolder).get(changes.transaction_id, batchId, line) as { batch_id: string; line: number } | undefined;
    if (other) return { kind: 'taken', ...other };
  }
  return reserve ? reservationRefused(c, batchId, line, reserve) : null;
}

/** What the commit takes from the row, read; undefined when the row is not at `revision`. */
function readSeen(c: SqliteConnection, batchId: string, line: number, revision: number): SeenColumns | undefined {
  const read = c.sql(`SELECT revision, ${SEEN_COLUMNS.join(', ')} FROM rows WHERE batch_id = ? AND line = ?`).get(batchId, line) as
    (SeenColumns & { revision: number }) | undefined;
  return read?.revision === revision ? read : undefined;
}

function stillAsSeen(c: SqliteConnection, batchId: string, line: number, revision: number, before: SeenColumns): boolean {
  return c.sql(`SELECT 1 FROM rows WHERE batch_id = ? AND line = ? AND revision = ? AND ${AS_SEEN}`).get(batchId, line, revision, ...SEEN_COLUMNS.map((column) => before[column])) !== undefined;
}

/** Applies the changes if the row is still at `revision` and as `before` says; false when it is not (nothing changed). */
function update(c: SqliteConnection, batchId: string, line: number, revision: number, changes: RowChanges, before: SeenColumns, countRead: boolean): boolean {
  // In CHANGEABLE's order: the same columns always make the same statement, compiled once (and nothing sorted a row).
  // A column an index depends on is left out when it keeps its value: SQLite rewrites an index entry whenever the
  // update names a column of it, and a transaction id names a random page of its index (one more page a commit).
  const unchanged = (column: string): boolean => isSeen(column) && ((changes as Record<string, unknown>)[column] ?? null) === before[column];
  const columns = CHANGEABLE.filter((column) => column in changes && !unchanged(column));
  const values = columns.map((column) => storedValue(column, (changes as Record<string, unknown>)[column]));
  const set = [...columns.map((column) => `${column} = ?`), 'revision = revision + 1', ...(countRead ? ['reads = reads + 1'] : [])].join(', ');
  return c.sql(`UPDATE rows SET ${set} WHERE batch_id = ? AND line = ? AND revision = ? AND ${AS_SEEN}`)
    .run(...values, batchId, line, revision, ...SEEN_COLUMNS.map((column) => before[column])).changes === 1;
}
