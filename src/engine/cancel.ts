/**
 * `paybatch cancel`'s use case [1]: an integration must support cancellation.
 * Sends DELETE for the matching rows whose transaction may still be cancelled,
 * then follows them to canceled or refunded. Rows named explicitly that cannot
 * be cancelled are listed with why, as are names that match no row.
 */
import type { PayoutClient } from '../api/client.js';
import type { Clock } from '../clock.js';
import type { EngineConfig } from '../config/config.js';
import type { PipelineRow, PipelineStore } from '../store/port.js';
import { CANCELLABLE_PHASES, DUPLICATE_HOLD, PHASES, REASONS, isNotCreatedYet } from '../payout-states.js';
import type { PipelineLog } from './pipeline.js';
import { Pipeline } from './pipeline.js';
import type { ApprovalGate } from './approval-gate.js';

export interface CancelRequest {
  batch: string;
  externalIds?: readonly string[];
  /** Only rows whose last known state is one of these, e.g. error, manual. */
  states?: readonly string[];
  /** Who asked, kept with the row's reason. */
  by?: string;
  /** Asked once the rows are chosen, before anything is cancelled: false cancels nothing. */
  confirm?: (rows: number) => Promise<boolean>;
}

export interface CancelLine {
  line: number | null;
  external_id: string;
  state_before: string;
  cancelled: boolean;
  reason: string;
  state_after: string | null;
}

/** Why a row named explicitly is not cancellable in its phase. */
function notCancellable(row: PipelineRow): string {
  if (row.phase === 'final') return `already final (${row.state ?? row.outcome ?? 'ended'})`;
  if (row.phase === 'cancelling') return 'a cancellation is already under way';
  if (isNotCreatedYet(row.phase)) return 'not created at the service yet; nothing to cancel';
  if (row.phase === 'funding') return 'a funding call is in flight; try again in a moment';
  return `never sent (${row.outcome ?? row.phase})`;
}

/** A row held as a possible duplicate was never sent: cancelling it ends it not sent, its reason kept, and lets its batch settle. */
async function endHeldDuplicate(row: PipelineRow, by: string | null, store: PipelineStore): Promise<CancelLine> {
  const detail = `${row.outcome_detail ?? 'a possible duplicate'}; not sent: cancelled${by ? ` by ${by}` : ''}`;
  const done = await store.movePhase(row.batch_id, row.line, [DUPLICATE_HOLD], 'not_sent', REASONS.possibleDuplicate, detail);
  return { line: row.line, external_id: row.external_id, state_before: REASONS.possibleDuplicate, cancelled: done, reason: done ? 'never sent: held as a possible duplicate, now ended not sent' : 'allowed or cancelled meanwhile', state_after: null };
}

export async function cancelRows(
  request: CancelRequest,
  deps: { store: PipelineStore; client: PayoutClient; clock: Clock; engine: EngineConfig; log: PipelineLog; waitMs: number; sleep?: (ms: number) => Promise<void>; gate?: ApprovalGate },
): Promise<CancelLine[]> {
  const pipeline = new Pipeline({ ...deps });
  // The reads below may fund a row that became fundable: with approvals on, only within what was approved.
  await pipeline.prepare();
  const named = new Set(request.externalIds ?? []);
  const seen = new Set<string>();
  const lines: CancelLine[] = [];
  const chosen: PipelineRow[] = [];
  // Every row but those still being checked at intake.
  const all = PHASES.filter((phase) => phase !== 'checking');
  for (let after = 0; ; ) {
    const rows = await deps.store.rowsInPhases(request.batch, all, after, 1000);
    if (rows.length === 0) break;
    for (const row of rows) {
      if (request.externalIds && !named.has(row.external_id)) continue;
      seen.add(row.external_id);
      if (request.states && !request.states.includes(row.state ?? '')) continue;
      if ((CANCELLABLE_PHASES as readonly string[]).includes(row.phase) || row.phase === DUPLICATE_HOLD) chosen.push(row);
      else if (named.has(row.external_id)) lines.push({ line: row.line, external_id: row.external_id, state_before: row.state ?? row.phase, cancelled: false, reason: notCancellable(row), state_after: row.state });
    }
    after = (rows[rows.length - 1] as PipelineRow).line;
  }
  for (const id of named) {
    if (!seen.has(id)) lines.push({ line: null, external_id: id, state_before: '', cancelled: false, reason: `no row of batch ${request.batch} has this external_id`, state_after: null });
  }
  if (chosen.length > 1 && request.confirm && !(await request.confirm(chosen.length))) {
    return [...lines, ...chosen.map((row) => ({ line: row.line, external_id: row.external_id, state_before: row.state ?? row.phase, cancelled: false, reason: 'not confirmed', state_after: row.state }))];
  }
  for (const row of chosen) {
    if (row.phase === DUPLICATE_HOLD) {
      lines.push(await endHeldDuplicate(row, request.by ?? null, deps.store));
      continue;
    }
    const outcome = await pipeline.cancelOnRequest(row, request.by ?? null);
    lines.push({ line: row.line, external_id: row.external_id, state_before: outcome.state, cancelled: outcome.done, reason: outcome.reason, state_after: null });
  }
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const until = deps.clock.now() + deps.waitMs;
  pipeline.setDeadline(until);
  // The batch's rows cancelling, those whose read is due: only they are followed here, not every row in flight of every
  // batch (a running watch, or the other workers, read those), within the polling budget as run and watch are [D17].
  const cancelling = async (): Promise<PipelineRow[]> => deps.store.rowsInPhases(request.batch, ['cancelling'], 0, 1000);
  for (let rows = await cancelling(); rows.length > 0 && deps.clock.now() < until; rows = await cancelling()) {
    const read = pipeline.readRows(rows.filter((row) => (row.next_read_at ?? 0) <= deps.clock.now()));
    await sleep(read === 0 ? 200 : pipeline.readsCostMs(read));
  }
  // The reads started last have their answers recorded before the states are said.
  await pipeline.idle();
  for (const line of lines) {
    if (line.line === null) continue;
    const now = await deps.store.row(request.batch, line.line);
    line.state_after = now?.state ?? (now?.phase === 'not_sent' ? 'not_sent' : null);
  }
  return lines.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
}

/**
 * One row's cancellation, asked for by a person in the console: as
 * `paybatch cancel B --external-id X`, without waiting for the end
 * (the daemon follows the row to canceled or refunded).
 */
export async function cancelOneRow(
  deps: { store: PipelineStore; client: PayoutClient; clock: Clock; engine: EngineConfig; log: PipelineLog; gate?: ApprovalGate },
  batch: string, line: number, by: string,
): Promise<{ done: boolean; state: string; reason: string }> {
  const row = await deps.store.row(batch, line);
  if (!row) return { done: false, state: '', reason: `no line ${line} in batch ${batch}` };
  const [outcome] = await cancelRows({ batch, externalIds: [row.external_id], by }, { ...deps, waitMs: 0 });
  if (!outcome) return { done: false, state: row.state ?? row.phase, reason: 'nothing matched' };
  return { done: outcome.cancelled, state: outcome.state_after ?? outcome.state_before, reason: outcome.reason };
}
