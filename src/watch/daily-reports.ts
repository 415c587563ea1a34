/** The daemon's reports on schedule: the results of the open batches rewritten, and the daily reconciliation. */
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { PipelineLog } from '../engine/pipeline.js';
import type { ReportDeps } from '../engine/reconcile-report.js';
import { verdictFields, writeReconciliation } from '../engine/reconcile-report.js';
import type { SettleDeps } from '../engine/settle.js';
import { writeBatchResults } from '../engine/settle.js';
import { dateIn, dayBefore } from '../reports/period.js';
import { readShare } from '../engine/reads-under-way.js';

/** What the daily reconciliation takes of the daemon's parts (the daemon's deps give it). */
export interface DailyReconciliationDeps extends Pick<ReportDeps, 'store' | 'client' | 'workspace'> {
  config: Pick<Config, 'reports' | 'engine'>;
  clock: Clock;
  log: PipelineLog;
  ledgerUrl?: string | null;
  /** Several workers on PostgreSQL: the reconciliation reads at this worker's share of the polling rate [D17]. */
  shared?: { readonly liveWorkers: number } | null;
}

/** The daily reconciliation: the day before today, in the reports' time zone. */
export async function reconcileYesterday(deps: DailyReconciliationDeps): Promise<void> {
  const { config, clock, store, client, workspace, log } = deps;
  const date = dayBefore(dateIn(clock.now(), config.reports.time_zone));
  const outcome = await writeReconciliation(
    { date, format: 'csv', spreadsheet: false },
    { store, client, workspace, clock, reports: config.reports, readsPerSecond: readShare(config.engine.polling.reads_per_second, deps.shared?.liveWorkers ?? null), ledgerUrl: deps.ledgerUrl ?? null },
  );
  log('reconciliation_written', { date, ...verdictFields(outcome.verdict), files: outcome.files.length });
}

/** The result files of the open batches, and which batches this process wrote results for. */
export class OpenResults {
  private readonly written = new Set<string>();

  /**
   * Rewrites the result files of the open batches. A batch this process wrote
   * results for that is no longer open (settled by another worker) gets its
   * final results here too, so that no outbox keeps a stale file.
   */
  async write(deps: SettleDeps): Promise<void> {
    const open = new Set((await deps.store.openBatches()).map((batch) => batch.id));
    for (const batch of [...this.written]) {
      if (open.has(batch)) continue;
      await writeBatchResults(deps, batch);
      this.written.delete(batch);
    }
    for (const batch of open) {
      await writeBatchResults(deps, batch);
      this.written.add(batch);
    }
  }
}
