/**
 * `paybatch report --date YYYY-MM-DD | --batch B [--format csv|json|xlsx] [--spreadsheet]`.
 * Exits 0 only for a complete report with no unexplained difference; 3 (a
 * person must look, as `run` uses it) for unexplained differences or a check
 * that could not run, so that a scheduled job can alert on it.
 */
import { Command, Option } from 'commander';
import type { ReportFormat } from '../engine/reconcile-report.js';
import { ledgerUrlFor, writeReconciliation } from '../engine/reconcile-report.js';
import { UsageError } from '../errors.js';
import { verdictExitCode } from '../reports/reconciliation-verdict.js';
import { withEngineSession } from './engine-session.js';

interface Opts {
  date?: string;
  batch?: string;
  format: ReportFormat;
  spreadsheet?: boolean;
  home?: string;
  config?: string;
}

export function reportCommand(): Command {
  return new Command('report')
    .description('Write the reconciliation of a day or a batch under outbox/reports/: movements, summary, exceptions and checks against the service.')
    .option('--date <YYYY-MM-DD>', 'the day, in reports.time_zone (default UTC)')
    .option('--batch <id>', 'a whole batch instead of a day')
    .addOption(new Option('--format <format>', 'csv (four files), json (one) or xlsx (one workbook: a sheet per CSV file, and the results for --batch)').choices(['csv', 'json', 'xlsx']).default('csv'))
    .option('--spreadsheet', 'CSV for spreadsheets in locales that need it: UTF-8 BOM, ";" between fields, decimal comma')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file (default: paybatch.config.json in the workspace)')
    .action(async (opts: Opts) => {
      if (Boolean(opts.date) === Boolean(opts.batch)) throw new UsageError('give either --date YYYY-MM-DD or --batch B');
      if (opts.spreadsheet && opts.format === 'xlsx') throw new UsageError('--spreadsheet shapes CSV files for spreadsheets; --format xlsx is a spreadsheet already: give one or the other');
      await withEngineSession(opts, async ({ config, workspace, store, connection }) => {
        const ledgerUrl = ledgerUrlFor(config.reports, connection.embedded?.operatorUrl ?? null);
        const outcome = await writeReconciliation(
          { date: opts.date, batch: opts.batch, format: opts.format, spreadsheet: opts.spreadsheet === true },
          {
            // With no service configured, the embedded sandbox is the workspace's own (its state kept in the workspace): the one that paid.
            store, client: connection.client, workspace, reports: config.reports, readsPerSecond: config.engine.polling.reads_per_second, ledgerUrl,
          },
        );
        process.stdout.write(outcome.text);
        const exitCode = verdictExitCode(outcome.verdict);
        if (exitCode !== 0) {
          process.stderr.write(`paybatch: reconciliation ${outcome.reconciliation.period.label}: ${outcome.verdict.words}: a person must look (exit ${exitCode})\n`);
          process.exitCode = exitCode;
        }
      }, { exclusive: false });
    });
}
