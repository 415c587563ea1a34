/**
 * `paybatch cancel`'s use case [1]: an integration must support cancellation.
 * Sends DELETE for the matching rows whose transaction may still be cancelled,
 * then follows them to canceled or refunded; the others are listed with why.
 */
import type { PayoutClient } from '../api/client.js';
import type { Clock } from '../clock.js';
import type { EngineConfig } from '../config/config.js';
import type { PipelineRow, PipelineStore } from '../store/store.js';
import type { PipelineLog } from './pipeline.js';
import { Pipeline } from './pipeline.js';

export interface CancelRequest {
  batch: string;
  externalIds?: readonly string[];
  /** Only rows whose last known state is one of these, e.g. error, manual. */
  states?: readonly string[];
}

export interface CancelLine {
  line: number;
  external_id: string;
  state_before: string;
  cancelled: boolean;
  reason: string;
  state_after: string | null;
}

export async function cancelRows(
  request: CancelRequest,
  deps: { store: PipelineStore; client: PayoutClient; clock: Clock; engine: EngineConfig; log: PipelineLog; waitMs: number; sleep?: (ms: number) => Promise<void> },
): Promise<CancelLine[]> {
  const pipeline = new Pipeline({ ...deps });
  const chosen: PipelineRow[] = [];
  for (let after = 0; ; ) {
    const rows = await deps.store.rowsInPhases(request.batch, ['created', 'funded'], after, 1000);
    if (rows.length === 0) break;
    for (const row of rows) {
      if (request.externalIds && !request.externalIds.includes(row.external_id)) continue;
      if (request.states && !request.states.includes(row.state ?? '')) continue;
      chosen.push(row);
    }
    after = (rows[rows.length - 1] as PipelineRow).line;
  }
  const lines: CancelLine[] = [];
  for (const row of chosen) {
    const outcome = await pipeline.cancelOnRequest(row);
    lines.push({ line: row.line, external_id: row.external_id, state_before: outcome.state, cancelled: outcome.done, reason: outcome.reason, state_after: null });
  }
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const until = deps.clock.now() + deps.waitMs;
  const open = async (): Promise<number> => (await deps.store.rowsInPhases(request.batch, ['cancelling'], 0, 1)).length;
  while ((await open()) > 0 && deps.clock.now() < until) {
    const read = await pipeline.follow();
    if (read === 0) await sleep(200);
  }
  for (const line of lines) {
    const [now] = (await deps.store.rowsInPhases(request.batch, ['created', 'funded', 'cancelling', 'final'], line.line - 1, 1));
    line.state_after = now?.line === line.line ? now.state : null;
  }
  return lines;
}
