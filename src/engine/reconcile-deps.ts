/** What a reconciliation report is made with: the store, the client for its checks, the workspace and its settings. */
import type { PayoutClient } from '../api/client.js';
import type { Clock } from '../clock.js';
import type { ReportsConfig } from '../config/config.js';
import type { AuditStore, IntakeStore, PipelineStore, ReportStore } from '../store/port.js';
import type { Workspace } from '../workspace/workspace.js';

export interface ReportDeps {
  store: ReportStore & AuditStore & Pick<IntakeStore, 'correctionsOf'> & Pick<PipelineStore, 'row'>;
  client: Pick<PayoutClient, 'getTransaction'>;
  workspace: Workspace;
  reports: ReportsConfig;
  /** The polling budget's rate: reads for the check are spaced by it [D17]. */
  readsPerSecond: number;
  /** Where the service's ledger is, if it has one. */
  ledgerUrl: string | null;
  sleep?: (ms: number) => Promise<void>;
  /** What is now, for how far ahead of it the service's updated_at is trusted (the system clock unless given). */
  clock?: Clock;
  /** Rows read from the store at a time for a CSV report (5,000 unless given). */
  pageRows?: number;
}
