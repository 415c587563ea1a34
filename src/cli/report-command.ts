/**
 * `paybatch report --date YYYY-MM-DD | B [--format csv|json|xlsx] [--spreadsheet]`.
 * Exits 0 only for a complete report with no unexplained difference; 3 (a
 * person must look, as `run` uses it) for unexplained differences or a check
 * that could not run, so that a scheduled job can alert on it.
 */
import { Command, Option } from 'commander';
import type { ReportFormat } from '../engine/reconcile-report.js';
import { UsageError } from '../errors.js';
import { verdictExitCode } from '../reports/reconciliation-verdict.js';
import { systemClock } from '../clock.js';
import { roomForSending } from '../heap.js';
import { batchArgument } from './batch-argument.js';
import { withWorkspace } from './workspace-options.js';

interface Opts {
  date?: string;
  batch?: string;
  format: ReportFormat | 'pain002';
  spreadsheet?: boolean;
  home?: string;
  config?: string;
}

export function reportCommand(): Command {
  return withWorkspace(new Command('report'))
    .description('Write the reconciliation of a day or a batch under outbox/reports/: movements, summary, exceptions and checks against the service.')
    .argument('[batch]', 'a whole batch instead of a day')
    .option('--date <YYYY-MM-DD>', 'the day, in reports.time_zone (default UTC)')
    .option('--batch <id>', 'the same as the batch argument (the older spelling)')
    .addOption(new Option('--format <format>', 'csv (four files), json (one), xlsx (one workbook: a sheet per CSV file, and the results for a batch), or pain002 (with a batch taken from a pain.001: its ISO 20022 status report, outbox/BATCH.pain002.xml)').choices(['csv', 'json', 'xlsx', 'pain002']).default('csv'))
    .option('--spreadsheet', 'CSV for spreadsheets in locales that need it: UTF-8 BOM, ";" between fields, decimal comma')
    .action(async (argument: string | undefined, given: Opts, self: Command) => {
      const opts = { ...given, batch: argument === undefined && given.batch === undefined ? undefined : batchArgument(self, argument, given.batch) };
      if (Boolean(opts.date) === Boolean(opts.batch)) throw new UsageError('give either --date YYYY-MM-DD or a batch (paybatch report B)');
      if (opts.spreadsheet && opts.format === 'xlsx') throw new UsageError('--spreadsheet shapes CSV files for spreadsheets; --format xlsx is a spreadsheet already: give one or the other');
      if (opts.format === 'pain002') return statusReport(opts);
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ withEngineSession }, { ledgerUrlFor, writeReconciliation }] = await Promise.all([import('./engine-session.js'), import('../engine/reconcile-report.js')]);
      await withEngineSession(opts, async ({ config, workspace, store, connection }) => {
        // A report of a day reads and writes rows as fast as sending makes objects: the young generation sending has
        // (src/heap.ts) took a quarter off a day of 200,000 rows (docs/performance.md).
        roomForSending();
        const ledgerUrl = ledgerUrlFor(config.reports, connection.embedded?.operatorUrl ?? null);
        const outcome = await writeReconciliation(
          { date: opts.date, batch: opts.batch, format: opts.format as ReportFormat, spreadsheet: opts.spreadsheet === true },
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

/** `--format pain002`: the ISO 20022 status report of a batch taken from a pain.001, as it stands (PDNG for rows in flight). */
async function statusReport(opts: Opts): Promise<void> {
  if (!opts.batch) throw new UsageError('--format pain002 answers one pain.001: give the batch: paybatch report B --format pain002');
  const batchId = opts.batch;
  const [{ withEngineSession }, { readerOptions }, { answersWithPain002, pain001Of, writePain002 }] = await Promise.all([
    import('./engine-session.js'), import('../batch/batch-options.js'), import('../engine/pain002-file.js'),
  ]);
  await withEngineSession(opts, async ({ config, workspace, store }) => {
    const batch = await store.batch(batchId);
    if (!batch) throw new UsageError(`no batch ${batchId} in this workspace`);
    if (!answersWithPain002(batch)) throw new UsageError(`batch ${batchId} was taken from ${batch.file_name}, not from a pain.001 (.xml): it has no ISO 20022 status report`);
    const file = await writePain002({ workspace, store, clock: systemClock, reader: readerOptions(config.batch) }, batch, pain001Of(workspace, batch));
    process.stdout.write(`${file}\n`);
  }, { exclusive: false, service: false });
}
