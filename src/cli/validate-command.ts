/**
 * `paybatch validate FILE`: reads a batch and reports every problem, by line and
 * column, before any money moves. No network call. Rows paying an account the
 * same amount as an earlier line of the file, or (with a workspace database) as
 * a row of an earlier batch, are listed with that twin (possible duplicates;
 * warnings, not errors). Exit 0 when every row is
 * valid, 1 when some rows are invalid, 2 when the file cannot be read as a batch.
 */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config/config.js';
import type { FileEntry, Finding } from '../engine/duplicate-screen.js';
import type { ValidationReport } from '../batch/validate-file.js';
import { keepSqliteTemporaryFilesBeside, tuneHeap } from './process-tuning.js';
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

/**
 * The twins of a file's rows, as preview and intake find them: among the workspace's batches when it has a database
 * (no network call: the database only), and always among the earlier lines of the file itself.
 */
async function twinsOf(entries: readonly FileEntry[], config: Config, home: string, inWorkspace: boolean): Promise<Finding[]> {
  if (entries.length === 0) return [];
  if (!inWorkspace) {
    const { duplicatesOfFile } = await import('../engine/duplicate-screen.js');
    // No database: no earlier batch is anyone's twin, the earlier lines of the file still are.
    return duplicatesOfFile(entries, { store: { twinsOf: async () => [] }, batch: config.batch, now: systemClock.now() });
  }
  const [{ openStore }, { openWorkspace }, { duplicatesOfFile }] = await Promise.all([
    import('../store/open-store.js'), import('../workspace/workspace.js'), import('../engine/duplicate-screen.js'),
  ]);
  const workspace = openWorkspace(home);
  keepSqliteTemporaryFilesBeside(config.store, workspace);
  const { store } = await openStore(config.store, workspace);
  try {
    return await duplicatesOfFile(entries, { store, batch: config.batch, now: systemClock.now() });
  } finally {
    await store.close();
  }
}

function renderDuplicates(found: readonly Finding[]): string {
  if (found.length === 0) return '';
  const lines = [`possible duplicate payments: ${found.length} (the same recipient account, amount and currency as a row of an earlier batch, or an earlier line of this file)`];
  for (const f of found) lines.push(`  line ${f.line}  ${f.external_id ?? '-'}  ${f.detail}`);
  return `${lines.join('\n')}\n`;
}

export function validateCommand(): Command {
  return withWorkspace(new Command('validate'))
    .description('Check a batch file, every row and column, without moving any money (exit 0 valid, 1 invalid rows, 2 unreadable file).')
    .argument('<file>', 'the batch file (.csv, or .xlsx: a spreadsheet)')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, opts: { json?: boolean; config?: string; home?: string }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ loadConfig, warnRowAmountMinor, workspaceHome }, { readerOptions, ruleOptions }, { BatchFileError }, { fileSha256 }, { validateFile }, { renderReport }, { OutlierWatch }] = await Promise.all([
        import('../config/config.js'), import('../batch/batch-options.js'), import('../batch/file-error.js'), import('../batch/file-hash.js'),
        import('../batch/validate-file.js'), import('../reports/validation-report.js'), import('../validate/outliers.js'),
      ]);
      const config = loadConfig({ file: opts.config, home: opts.home });
      tuneHeap(config);
      try {
        const watch = new OutlierWatch();
        // With the check on, each valid row's account is kept to look for twins: in the file, and in the workspace's
        // database (or a shared one) when there is one. Only a workspace that exists: validate creates nothing.
        const home = workspaceHome(opts.home);
        const looked = config.batch.duplicate_window !== 'off';
        const inWorkspace = looked && (config.store.url !== undefined || existsSync(join(resolve(home), 'paybatch.db')));
        const entries: FileEntry[] = [];
        const { fileEntry } = await import('../engine/duplicate-screen.js');
        const report = await validateFile(file, {
          reader: readerOptions(config.batch),
          rules: ruleOptions(config.batch, systemClock),
          maxReportedIssues: config.batch.max_reported_issues,
        }, {
          amount(line, externalId, currency, minor) {
            watch.add(line, externalId, currency, minor);
          },
          row: looked ? (checked) => {
            const entry = checked.valid ? fileEntry(checked.line, checked.request()) : null;
            if (entry) entries.push(entry);
          } : undefined,
          scratchRefused(message) {
            process.stderr.write(`paybatch: warning: ${message}\n`);
          },
        });
        const outliers = watch.outliers(warnRowAmountMinor(config.batch));
        const duplicates = looked ? await twinsOf(entries, config, home, inWorkspace) : [];
        process.stdout.write(opts.json ? `${JSON.stringify({ ...(toJson(report, outliers) as object), possible_duplicates: duplicates }, null, 2)}\n` : `${renderReport(report, outliers)}${renderDuplicates(duplicates)}`);
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
