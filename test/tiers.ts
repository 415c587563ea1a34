/**
 * The suite's three tiers, as vitest projects (see vitest.config.ts):
 * - unit: pure modules, in one process, no server, no child process, no build
 *   needed (validation rules, answers, decisions, reports' arithmetic);
 * - system: the built binary as child processes, worker threads loaded from
 *   the build, crash and chaos runs, PostgreSQL workers, Chromium;
 * - integration: everything else: the engine with the in-process sandbox over
 *   real HTTP, the stores on a real SQLite file and on PostgreSQL, the daemon's
 *   parts in process.
 * A file not named here is integration. The helpers that start the binary or
 * the browser refuse to run outside the system tier, and the sandbox outside
 * integration and system, so a test filed in the wrong tier fails at once.
 */
export const UNIT = [
  'test/api/answers.test.ts',
  'test/api/rate-bucket.test.ts',
  'test/batch/record-boundaries.test.ts',
  'test/batch/xlsx-bounds.test.ts',
  'test/batch/transfer-scan.test.ts',
  'test/batch/iso20022-decimal.test.ts',
  'test/batch/pain001-cut.test.ts',
  'test/chaos/invariants.test.ts',
  'test/console/console-input.test.ts',
  'test/console/money-labels.test.ts',
  'test/console/sign-in-throttle.test.ts',
  'test/console/batches-stage.test.ts',
  'test/cron.test.ts',
  'test/engine/corrections-rules.test.ts',
  'test/engine/batch-stage.test.ts',
  'test/engine/decide-lies.test.ts',
  'test/engine/file-wait.test.ts',
  'test/engine/decide-steps.test.ts',
  'test/engine/intake-plan.test.ts',
  'test/reports/advice.test.ts',
  'test/engine/duplicates.test.ts',
  'test/engine/call-slots-never-deadlock-or-leak.test.ts',
  'test/approvals/signed-rows.test.ts',
  'test/approvals/statement-duplicates.test.ts',
  'test/audit/person-names.test.ts',
  'test/notify/events.test.ts',
  'test/payout-states.test.ts',
  'test/vocabulary-written-once.test.ts',
  'test/no-fixed-sleeps.test.ts',
  'test/store/migration-plan.test.ts',
  'test/reports/cells.test.ts',
  'test/reports/period.test.ts',
  'test/reports/reconciliation.test.ts',
  'test/reports/reconciliation-verdict.test.ts',
  'test/reports/ledger-currency.test.ts',
  'test/sandbox/config.test.ts',
  'test/store/corridor-counts.test.ts',
  'test/store/pg-connection-lost-errors.test.ts',
  'test/store/pg-copy-text.test.ts',
  'test/store/sql-written-once.test.ts',
  'test/validate/**/*.test.ts',
  'test/watch/webhook-delivery.test.ts',
];

export const SYSTEM = [
  'test/audit/encoding.test.ts',
  'test/audit/trail.test.ts',
  'test/audit/verify-ranges.test.ts',
  'test/audit/versions.test.ts',
  'test/batch/iso20022-schema.test.ts',
  'test/batch/pain002.test.ts',
  'test/batch/pain001-parallel.test.ts',
  'test/batch/pain001-as-csv.test.ts',
  'test/batch/pain002-parallel.test.ts',
  'test/batch/heap-settings.test.ts',
  'test/batch/xlsx-bomb-cli.test.ts',
  'test/batch/xlsx-huge.test.ts',
  'test/batch/xlsx-run.test.ts',
  'test/chaos/chaos-short.test.ts',
  'test/cli/**/*.test.ts',
  'test/console/console-browser.test.ts',
  'test/console/console-http.test.ts',
  'test/console/console-names.test.ts',
  'test/console/console-narrow.test.ts',
  'test/console/console-throttle.test.ts',
  'test/console/metrics.test.ts',
  'test/console/reconciliation-browser.test.ts',
  'test/engine/crash.test.ts',
  'test/engine/workers.test.ts',
  'test/engine/workers-rate-limits.test.ts',
  'test/engine/workers-database-lost.test.ts',
  'test/notify/cli-notifications.test.ts',
  'test/sandbox/shared-file.test.ts',
  'test/store/background-check.test.ts',
  'test/store/checkpointer*.test.ts',
  'test/store/postgres-shared-work.test.ts',
  'test/store/sqlite-temporary-files.test.ts',
  'test/watch/database-health.test.ts',
  'test/watch/intake-marker-cli.test.ts',
  'test/watch/intake-whole.test.ts',
  'test/workspace/links-never-followed.test.ts',
];

/**
 * System files run two at a time (the `system-paired` project): their child processes spend their time waiting on
 * the sandbox's payouts and on `--wait` bounds, not on a core (the system tier used about a third of two cores,
 * one file at a time). The files left out use both cores themselves (threads, large files, Chromium, chaos, workers),
 * measure memory or a rate, or time a stop: they run alone, as before.
 */
export const SYSTEM_PAIRED = [
  'test/audit/encoding.test.ts',
  'test/audit/trail.test.ts',
  'test/audit/verify-ranges.test.ts',
  'test/audit/versions.test.ts',
  'test/batch/iso20022-schema.test.ts',
  'test/batch/pain001-as-csv.test.ts',
  'test/batch/pain002.test.ts',
  'test/batch/xlsx-run.test.ts',
  'test/cli/batch-stages.test.ts',
  'test/cli/cli-conventions.test.ts',
  'test/cli/corrections-command.test.ts',
  'test/cli/embedded-sandbox.test.ts',
  'test/cli/embedded-workspace.test.ts',
  'test/cli/engine-session.test.ts',
  'test/cli/exit-codes.test.ts',
  'test/cli/help-loads.test.ts',
  'test/cli/missing-folders.test.ts',
  'test/cli/money-preview.test.ts',
  'test/cli/no-secret-in-any-output.test.ts',
  'test/cli/process-tuning.test.ts',
  'test/cli/reject-command.test.ts',
  'test/cli/report-command.test.ts',
  'test/cli/run-command.test.ts',
  'test/cli/sandbox-command.test.ts',
  'test/cli/secret-files-never-echoed.test.ts',
  'test/cli/service-connection.test.ts',
  'test/console/console-http.test.ts',
  'test/console/console-names.test.ts',
  'test/console/metrics.test.ts',
];

export type Tier = 'unit' | 'integration' | 'system';

/** Refuses, with the reason, what a test of this tier may not start (`needs`: the tiers that may). */
export function requireTier(what: string, needs: readonly Tier[]): void {
  const tier = process.env.PAYBATCH_TEST_TIER as Tier | undefined;
  if (tier === undefined || needs.includes(tier)) return;
  throw new Error(`${what} is for the ${needs.join(' or ')} tier, and this test file is filed under ${tier}: list it in test/tiers.ts`);
}
