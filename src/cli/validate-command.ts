/**
 * `paybatch validate FILE`: reads a batch and reports every problem, by line and
 * column, before any money moves. No network call. Exit 0 when every row is
 * valid, 1 when some rows are invalid, 2 when the file cannot be read as a batch.
 */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import type { ValidationReport } from '../batch/validate-file.js';
import { withWorkspace } from './workspace-options.js';
import type { Outlier } from '../validate/outliers.js';

export const VALIDATE_EXIT = { valid: 0, invalid: 1, unreadable: 2 } as const;

function toJson(report: ValidationReport, outliers: readonly Outlier[]): unknown {
  return {
    file: report.file,
    sha256: report.sha256,
    delimiter: report.delimiter === '\t' ? 'tab' : report.delimiter,
    ...(report.sheet === undefined ? {} : { sheet: report.sheet }),
    rows: report.rows,
    valid: report.valid,
    invalid: report.invalid,
    totals: report.totals,
    errors: report.errors,
    warnings: report.warnings,
    error_count: report.errorCount,
    warning_count: report.warningCount,
    truncated: report.truncated,
    outliers,
  };
}

export function validateCommand(): Command {
  return withWorkspace(new Command('validate'))
    .description('Check a batch file, every row and column, without moving any money (exit 0 valid, 1 invalid rows, 2 unreadable file).')
    .argument('<file>', 'the batch file (.csv, or .xlsx: a spreadsheet)')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, opts: { json?: boolean; config?: string; home?: string }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ loadConfig, warnRowAmountMinor }, { readerOptions, ruleOptions }, { BatchFileError }, { fileSha256 }, { validateFile }, { renderReport }, { OutlierWatch }] = await Promise.all([
        import('../config/config.js'), import('../batch/batch-options.js'), import('../batch/file-error.js'), import('../batch/file-hash.js'),
        import('../batch/validate-file.js'), import('../reports/validation-report.js'), import('../validate/outliers.js'),
      ]);
      const config = loadConfig({ file: opts.config, home: opts.home });
      try {
        const watch = new OutlierWatch();
        const report = await validateFile(file, {
          reader: readerOptions(config.batch),
          rules: ruleOptions(config.batch, systemClock),
          maxReportedIssues: config.batch.max_reported_issues,
        }, {
          amount(line, externalId, currency, minor) {
            watch.add(line, externalId, currency, minor);
          },
          scratchRefused(message) {
            process.stderr.write(`paybatch: warning: ${message}\n`);
          },
        });
        const outliers = watch.outliers(warnRowAmountMinor(config.batch));
        process.stdout.write(opts.json ? `${JSON.stringify(toJson(report, outliers), null, 2)}\n` : renderReport(report, outliers));
        process.exitCode = report.invalid === 0 ? VALIDATE_EXIT.valid : VALIDATE_EXIT.invalid;
      } catch (error) {
        if (!(error instanceof BatchFileError)) throw error;
        const where = error.line === null ? file : `${file}, line ${error.line}`;
        if (opts.json) {
          const body = { file, sha256: await fileSha256(file), error: { code: error.code, line: error.line, ...(error.cell ? { cell: error.cell } : {}), message: error.message } };
          process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
        } else {
          process.stderr.write(`paybatch: ${where}: cannot be read as a batch (${error.code}): ${error.message}\n`);
        }
        process.exitCode = VALIDATE_EXIT.unreadable;
      }
    });
}
