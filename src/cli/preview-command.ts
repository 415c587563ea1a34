/** `paybatch preview BATCH|FILE [--json]`: what will be paid, before anyone approves it (a dry run for a file). */
import { existsSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { systemClock } from '../clock.js';
import { ExitCode, PaybatchError } from '../errors.js';
import { money } from '../engine/for-people.js';
import type { Preview } from '../engine/preview.js';
import { parsePersonName } from './person-name.js';
import { withWorkspace } from './workspace-options.js';
import type { PayeePage } from './preview-payees.js';
import { outlierWarningLines, payeeLines, PREVIEW_PAGE_ROWS } from './preview-payees.js';

export function renderPreview(p: Preview, subject: string, page: PayeePage = { page: 1, all: false }): string {
  const lines = [`${p.subject}: ${p.status}`, `  deployment ${p.deployment} (an approval is for this database only)`, `  file SHA-256 ${p.file_sha256}`];
  lines.push(`  rows to send ${p.rows.to_send}; invalid ${p.rows.invalid}; external_id used by an earlier batch ${p.rows.already_used.length}${p.rows.already_used.length ? ` (${p.rows.already_used.slice(0, 10).join(', ')}${p.rows.already_used.length > 10 ? ', ...' : ''})` : ''}`);
  for (const [currency, total] of Object.entries(p.totals)) lines.push(`  to pay out in ${currency}: ${money(total, currency)} (largest row ${money(p.largest_row[currency] ?? '0', currency)})`);
  for (const [currency, e] of Object.entries(p.funding_estimate)) {
    const ceiling = p.proposed_ceiling[currency];
    lines.push(`  funding in ${currency}: about ${money(e.minor, currency)}${e.rows_without_estimate ? ` and ${e.rows_without_estimate} rows with no rate to estimate them` : e.exact ? ' (exact)' : ''}; ceiling proposed ${ceiling === null || ceiling === undefined ? 'none: give --ceiling' : money(ceiling, currency)}`);
  }
  for (const c of p.inactive_corridors ?? []) lines.push(`  corridor switched off at the service now: ${c.corridor} (${c.rows} rows would not be sent)`);
  lines.push(`  approvers required: ${p.required_approvers.count}${p.required_approvers.because.length ? ` (${p.required_approvers.because.join('; ')})` : ''}`);
  for (const a of p.approvals) lines.push(`  ${a.decision === 'approve' ? 'approved' : 'rejected'} by ${a.person} at ${a.at}${a.reason ? `: ${a.reason}` : ''}`);
  if (p.expires_at) lines.push(`  the approval request expires at ${p.expires_at}`);
  lines.push(...outlierWarningLines(p.outliers), ...payeeLines(subject, p.payees, page));
  if (p.possible_duplicates.length > 0) {
    lines.push(`  possible duplicate payments (the same account, amount and currency as a row of an earlier batch, or an earlier line of this file): ${p.possible_duplicates.length}`);
    for (const d of p.possible_duplicates) {
      const twin = d.twin.same_file
        ? `line ${d.twin.line} of the same file (external_id ${d.twin.external_id ?? '-'}, sent first)`
        : `batch ${d.twin.batch} line ${d.twin.line} (external_id ${d.twin.external_id ?? '-'}, ${d.twin.state}, ${d.twin.date.slice(0, 10)})`;
      const standing = d.allowed_by ? `allowed by ${d.allowed_by}: ${d.allowed_reason ?? ''}` : d.action === 'hold' ? 'held: not sent until allowed (paybatch allow)' : 'sent, with this warning';
      lines.push(`    line ${d.line}  ${d.external_id ?? '-'}  twin of ${twin}  ${standing}`);
    }
  }
  if (p.invalid.length > 0) {
    lines.push('  invalid rows:');
    for (const issue of p.invalid.slice(0, 20)) lines.push(`    line ${issue.line}  ${issue.column}  ${issue.code}  ${issue.message}`);
  }
  return `${lines.join('\n')}\n`;
}

function parsePage(value: string): number {
  if (!/^[1-9]\d{0,6}$/.test(value)) throw new InvalidArgumentError('a page number: 1, 2, 3...');
  return Number(value);
}

export function previewCommand(): Command {
  return withWorkspace(new Command('preview'))
    .description('Show what a batch (or a file, as a dry run) will pay: rows, totals, funding estimate and ceiling, invalid rows, inactive corridors, approvers needed.')
    .argument('<batch-or-file>', 'a batch id, or a batch file not taken in yet')
    .option('--json', 'print JSON (every row to send)')
    .option('--page <n>', `which page of the rows to send to list, ${PREVIEW_PAGE_ROWS} a page`, parsePage, 1)
    .option('--all', 'list every row to send')
    .option('--as <name>', 'who previews it (kept in the audit trail)', parsePersonName)
    .action(async (subject: string, opts: { json?: boolean; page: number; all?: boolean; as?: string; home?: string; config?: string }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ withEngineSession }, { previewBatch, previewFile }] = await Promise.all([import('./engine-session.js'), import('../engine/preview.js')]);
      await withEngineSession(opts, async ({ config, store, connection }) => {
        const deps = { store, client: connection.client, config, clock: systemClock };
        const preview = existsSync(subject) ? await previewFile(subject, deps) : await previewBatch(subject, deps);
        if (!preview) throw new PaybatchError(`no batch ${subject}, and no such file`, ExitCode.failure);
        await store.appendAudit({
          at: new Date().toISOString(), actor: opts.as ?? 'unknown', action: 'preview', subject: preview.subject,
          details: { file_sha256: preview.file_sha256, rows: preview.rows.to_send, rows_sha256: preview.rows_sha256, totals: preview.totals, proposed_ceiling: preview.proposed_ceiling },
        });
        process.stdout.write(opts.json ? `${JSON.stringify(preview, null, 2)}\n` : renderPreview(preview, subject, { page: opts.page, all: opts.all === true }));
      }, { exclusive: false });
    });
}
