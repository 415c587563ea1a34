/**
 * `paybatch validate FILE`: reads a batch and reports every problem, by line and
 * column, before any money moves. No network call. Exit 0 when every row is
 * valid, 1 when some rows are invalid, 2 when the file cannot be read as a batch.
 */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { loadConfig } from '../config/config.js';
import { readerOptions, ruleOptions } from '../batch/batch-options.js';
import { BatchFileError } from '../batch/file-error.js';
import { fileSha256 } from '../batch/file-hash.js';
import type { ValidationReport } from '../batch/validate-file.js';
import { validateFile } from '../batch/validate-file.js';
import { currencyDecimals, formatMinor } from '../validate/money.js';
import type { Issue } from '../validate/issue.js';

export const VALIDATE_EXIT = { valid: 0, invalid: 1, unreadable: 2 } as const;

function table(issues: readonly Issue[]): string[] {
  const width = (pick: (i: Issue) => string, title: string, max: number): number =>
    Math.min(max, Math.max(title.length, ...issues.map((i) => pick(i).length)));
  const wLine = width((i) => String(i.line), 'LINE', 8);
  const wColumn = width((i) => i.column, 'COLUMN', 30);
  const wCode = width((i) => i.code, 'CODE', 26);
  const row = (line: string, column: string, code: string, message: string): string =>
    `  ${line.padStart(wLine)}  ${column.padEnd(wColumn)}  ${code.padEnd(wCode)}  ${message}`;
  return [row('LINE', 'COLUMN', 'CODE', 'MESSAGE'), ...issues.map((i) => row(String(i.line), i.column, i.code, i.message))];
}

function formatTotals(totals: Record<string, string>): string[] {
  return Object.entries(totals).map(([currency, minor]) => {
    const decimals = currencyDecimals(currency) ?? 2;
    return `  ${currency}  ${formatMinor(BigInt(minor), decimals).padStart(18)}   (${minor} minor units)`;
  });
}

export function renderReport(report: ValidationReport): string {
  const lines = [
    `${report.file}: ${report.rows} rows, ${report.valid} valid, ${report.invalid} invalid, ${report.warningCount} warnings`,
  ];
  if (report.errors.length > 0) lines.push('', `Errors (${report.errorCount})`, ...table(report.errors));
  if (report.warnings.length > 0) lines.push('', `Warnings (${report.warningCount})`, ...table(report.warnings));
  if (report.truncated) lines.push('', `Only the first ${Math.max(report.errors.length, report.warnings.length)} of each are listed (batch.max_reported_issues).`);
  lines.push('', 'Totals of the valid rows, per output currency', ...(Object.keys(report.totals).length > 0 ? formatTotals(report.totals) : ['  none']));
  return `${lines.join('\n')}\n`;
}

function toJson(report: ValidationReport): unknown {
  return {
    file: report.file,
    sha256: report.sha256,
    delimiter: report.delimiter === '\t' ? 'tab' : report.delimiter,
    rows: report.rows,
    valid: report.valid,
    invalid: report.invalid,
    totals: report.totals,
    errors: report.errors,
    warnings: report.warnings,
    error_count: report.errorCount,
    warning_count: report.warningCount,
    truncated: report.truncated,
  };
}

export function validateCommand(): Command {
  return new Command('validate')
    .description('Check a batch file, every row and column, without moving any money (exit 0 valid, 1 invalid rows, 2 unreadable file).')
    .argument('<file>', 'the batch CSV file')
    .option('--json', 'print the report as JSON')
    .option('--config <file>', 'configuration file (default: paybatch.config.json in the workspace, if any)')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .action(async (file: string, opts: { json?: boolean; config?: string; home?: string }) => {
      const config = loadConfig({ file: opts.config, home: opts.home });
      try {
        const report = await validateFile(file, {
          reader: readerOptions(config.batch),
          rules: ruleOptions(config.batch, systemClock),
          maxReportedIssues: config.batch.max_reported_issues,
        });
        process.stdout.write(opts.json ? `${JSON.stringify(toJson(report), null, 2)}\n` : renderReport(report));
        process.exitCode = report.invalid === 0 ? VALIDATE_EXIT.valid : VALIDATE_EXIT.invalid;
      } catch (error) {
        if (!(error instanceof BatchFileError)) throw error;
        const where = error.line === null ? file : `${file}, line ${error.line}`;
        if (opts.json) {
          const body = { file, sha256: await fileSha256(file), error: { code: error.code, line: error.line, message: error.message } };
          process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
        } else {
          process.stderr.write(`paybatch: ${where}: cannot be read as a batch (${error.code}): ${error.message}\n`);
        }
        process.exitCode = VALIDATE_EXIT.unreadable;
      }
    });
}
