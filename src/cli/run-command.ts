/** `paybatch run`: take the inbox, pay every valid row exactly once, follow, write results. */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import type { RunReport } from '../engine/run.js';
import { runOnce } from '../engine/run.js';
import { parseDuration } from './duration.js';
import { withEngineSession } from './engine-session.js';
import { startProgress } from './progress.js';

export function renderRun(report: RunReport): string {
  const lines: string[] = [];
  for (const outcome of report.intake) {
    if (outcome.kind === 'rejected') lines.push(`rejected ${outcome.batch}: ${outcome.report.invalid} invalid rows, nothing sent; report ${outcome.reportFile}`);
    if (outcome.kind === 'unreadable') lines.push(`unreadable ${outcome.batch}: ${outcome.error.message}; report ${outcome.reportFile}`);
    if (outcome.kind === 'not_read') lines.push(`refused ${outcome.file}: ${outcome.reason}; note ${outcome.reportFile}`);
    if (outcome.kind === 'duplicate') lines.push(`refused ${outcome.file}: same content as batch ${outcome.earlier.id}; note ${outcome.noteFile}`);
  }
  for (const batch of report.batches) {
    const states = Object.entries(batch.by_state).map(([state, n]) => `${state} ${n}`).join(', ');
    lines.push(`${batch.batch} (${batch.file}): ${batch.rows} rows: ${states}${batch.unsettled > 0 ? `; ${batch.unsettled} still in flight` : '; all final'}`);
    lines.push(`  results ${batch.results_file}`);
  }
  if (lines.length === 0) lines.push('nothing to do: the inbox is empty and no batch is in flight');
  return `${lines.join('\n')}\n`;
}

export function runCommand(): Command {
  return new Command('run')
    .description('Take every file in the inbox, pay each valid row exactly once, follow every payout, write results.')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file (default: paybatch.config.json in the workspace)')
    .option('--wait <duration>', 'how long to follow rows not final yet (90s, 10m, 2h)', parseDuration, 5 * 60_000)
    .option('--force', 'take files even when the same content was taken before (their external ids still cannot be paid twice)')
    .option('--progress-every <duration>', 'how often progress is printed when standard error is not a terminal (default 10s; live bars on a terminal)', parseDuration)
    .action(async (opts: { home?: string; config?: string; wait: number; force?: boolean; progressEvery?: number }) => {
      await withEngineSession(opts, async ({ config, workspace, store, log, connection }) => {
        const progress = startProgress(store, process.stderr, { intervalMs: opts.progressEvery });
        let report;
        try {
          report = await runOnce({ workspace, store, client: connection.client, config, clock: systemClock, log, force: opts.force, waitMs: opts.wait });
        } finally {
          await progress.stop();
        }
        process.stdout.write(renderRun(report));
      });
    });
}
