/** `paybatch run`: take the inbox, pay every valid row exactly once, follow, write results. */
import { Command, Option } from 'commander';
import { systemClock } from '../clock.js';
import { ExitCode, ServiceUnavailable } from '../errors.js';
import type { RunReport } from '../engine/run.js';
import { parseDuration } from './duration.js';
import { formatMoneyMap } from '../validate/money.js';

export function renderRun(report: RunReport): string {
  const lines: string[] = [];
  for (const outcome of report.intake) {
    if (outcome.kind === 'rejected') lines.push(`rejected ${outcome.batch}: ${outcome.report.invalid} invalid rows, nothing sent; report ${outcome.reportFile}`);
    if (outcome.kind === 'unreadable') lines.push(`unreadable ${outcome.batch}: ${outcome.error.message}; report ${outcome.reportFile}`);
    if (outcome.kind === 'not_read') lines.push(`refused ${outcome.file}: ${outcome.reason}; note ${outcome.reportFile}`);
    if (outcome.kind === 'duplicate') lines.push(`refused ${outcome.file}: same content as batch ${outcome.earlier.id}; note ${outcome.noteFile}`);
    if (outcome.kind === 'waiting') lines.push(`not taken yet ${outcome.name}: ${outcome.reason}; the next run looks again`);
    if (outcome.kind === 'changed') lines.push(`put back ${outcome.name}: ${outcome.reason}`);
  }
  for (const batch of report.batches) {
    const states = Object.entries(batch.by_state).map(([state, n]) => `${state} ${n}`).join(', ');
    lines.push(`${batch.batch} (${batch.file}): ${batch.rows} rows: ${states}${batch.unsettled > 0 ? `; ${batch.unsettled} still in flight` : '; all final'}`);
    const reasons = Object.entries(batch.by_reason).map(([reason, n]) => `${reason} ${n}`).join(', ');
    if (reasons) lines.push(`  refused or held by paybatch: ${reasons}`);
    const money = [...(Object.keys(batch.paid_out).length > 0 ? [`paid out ${formatMoneyMap(batch.paid_out)}`] : []), ...(Object.keys(batch.funded).length > 0 ? [`funded ${formatMoneyMap(batch.funded)}`] : [])];
    if (money.length > 0) lines.push(`  ${money.join('; ')}`);
    if (batch.approval === 'not_needed') lines.push(`  ${batch.approval_reason ?? 'nothing to send: no approval is needed'}`);
    if (batch.approval === 'awaiting') lines.push(`  awaiting approval: nothing is sent before it (paybatch preview ${batch.batch}; paybatch approve ${batch.batch} --key FILE --as NAME)`);
    if (batch.need_person > 0) lines.push(`  ${batch.need_person} rows need a person (see the results' state_reason and paybatch status ${batch.batch})`);
    lines.push(`  results ${batch.results_file}`);
  }
  if (report.serviceTrouble) lines.push(`the payout service stopped answering (${report.serviceTrouble}); what waits is taken up by the next run`);
  if (lines.length === 0) lines.push('nothing to do: the inbox is empty and no batch is in flight');
  return `${lines.join('\n')}\n`;
}

export function runCommand(): Command {
  return new Command('run')
    .description('Take every file in the inbox, pay each valid row exactly once, follow every payout, write results.')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file (default: paybatch.config.json in the workspace)')
    .addOption(new Option('--wait <duration>', 'how long to follow rows not final yet (90s, 10m, 2h)').argParser(parseDuration).default(5 * 60_000, '5m'))
    .option('--force', 'take files even when the same content was taken before (their external ids still cannot be paid twice)')
    .addOption(new Option('--progress-every <duration>', 'how often progress is printed when standard error is not a terminal (live bars on a terminal)').argParser(parseDuration).default(undefined, '10s'))
    .action(async (opts: { home?: string; config?: string; wait: number; force?: boolean; progressEvery?: number }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ withEngineSession }, { runOnce }, { startProgress }] = await Promise.all([import('./engine-session.js'), import('../engine/run.js'), import('./progress.js')]);
      await withEngineSession(opts, async ({ config, workspace, store, log, connection, shared, damage, stop }) => {
        // Damage found by the check beside the work stops it at once, as at start: every step is in the database.
        // The session lets go of the workspace, its log and notifications first (the lease is released).
        void damage.then((problem) => problem !== null && stop(problem));
        const progress = startProgress(store, process.stderr, { intervalMs: opts.progressEvery });
        let report;
        try {
          report = await runOnce({ workspace, store, client: connection.client, config, clock: systemClock, log, force: opts.force, waitMs: opts.wait, shared });
        } finally {
          await progress.stop();
        }
        // A damaged database is said before any report of work done, not after "nothing to do".
        const problem = await damage;
        if (problem) throw problem;
        process.stdout.write(renderRun(report));
        if (report.serviceTrouble) throw new ServiceUnavailable(`the payout service stopped answering: ${report.serviceTrouble}`);
        // Finished, but a person must look: cron and systemd see it in the exit code.
        if (report.batches.some((b) => b.need_person > 0)) process.exitCode = ExitCode.attention;
      });
    });
}
