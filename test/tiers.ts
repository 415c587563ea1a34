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
  'test/batch/request-text.test.ts',
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
  'test/engine/reads-under-way.test.ts',
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
  'test/store/pg-prepared.test.ts',
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
 * System files run one at a time, after every other file (the `system-alone` project). Every other system file runs
 * two at a time, beside the integration files (the `system` project): the suite must pass with both cores busy
 * (`npm run test:busy`). These time a stop against a thread's
 * work, start and stop a thread two hundred times with a bound on each start, or count a rate in one-second windows:
 * a second file's load moves what they time, not what they prove.
 */
export const SYSTEM_ALONE = [
  'test/store/background-check.test.ts',
  'test/store/checkpointer-restarts-and-exits-during-start.test.ts',
  // A rate counted in one-second windows at the sandbox: beside another file under load, a window once held 6 of 5.
  'test/engine/workers-rate-limits.test.ts',
];

export type Tier = 'unit' | 'integration' | 'system';

/** Refuses, with the reason, what a test of this tier may not start (`needs`: the tiers that may). */
export function requireTier(what: string, needs: readonly Tier[]): void {
  const tier = process.env.PAYBATCH_TEST_TIER as Tier | undefined;
  if (tier === undefined || needs.includes(tier)) return;
  throw new Error(`${what} is for the ${needs.join(' or ')} tier, and this test file is filed under ${tier}: list it in test/tiers.ts`);
}

/**
 * The files that took 20 s or more with four files at a time on the 2-core machine, longest first: each group starts
 * them first (test/longest-first-sequencer.ts), so that the run does not end waiting on one of them alone.
 */
export const LONGEST = [
  'test/engine/workers-database-lost.test.ts',
  'test/engine/workers.test.ts',
  'test/chaos/chaos-short.test.ts',
  'test/cli/embedded-workspace.test.ts',
  'test/cli/validate-command.test.ts',
  'test/cli/run-command.test.ts',
  'test/cli/approvals-command.test.ts',
  'test/store/checkpointer-under-run-and-watch.test.ts',
  'test/cli/watch-command.test.ts',
  'test/cli/cli-conventions.test.ts',
  'test/batch/pain001-parallel.test.ts',
  'test/cli/batch-stages.test.ts',
  'test/batch/xlsx-huge.test.ts',
  'test/engine/late-answers-after-a-hold.test.ts',
  'test/cli/help-loads.test.ts',
  'test/watch/intake-whole.test.ts',
];
