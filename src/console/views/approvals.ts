/**
 * The approvals pages: the batches awaiting approval, and one batch's preview
 * with the statement to sign, the signature to paste back, and a reject form.
 * The private key never comes here: the approver signs the statement with
 * `paybatch keys sign` on their own machine. Pure.
 */
import type { Statement } from '../../approvals/statement.js';
import type { Preview } from '../../engine/preview.js';
import type { BatchStatus } from '../../engine/status.js';
import { esc, major, plainMajor } from '../format.js';
import { formatMoney, formatMoneyAndMinor } from '../../validate/money.js';
import { may } from '../roles.js';
import type { Viewer } from './layout.js';
import { csrfField, notice, page, table } from './layout.js';

const money = (minor: Record<string, string | null>): string =>
  Object.entries(minor).map(([c, v]) => (v === null ? `${esc(c)}: cannot be estimated` : esc(major(v, c)))).join(', ') || 'none';

export function approvalsPage(viewer: Viewer, batches: readonly BatchStatus[]): string {
  const waiting = batches.filter((b) => b.approval === 'awaiting');
  const body = `${table(['Batch', 'File', 'Received', 'Rows', ''], waiting.map((b) => [
    esc(b.batch), esc(b.file), esc(b.received_at), String(b.rows), `<a href="/approvals/${encodeURIComponent(b.batch)}">Preview and decide</a>`,
  ]), 'Batches awaiting approval')}`;
  return page({ title: 'Approvals', viewer, current: '/approvals', body });
}

export interface ApprovalView {
  preview: Preview;
  /** What this person would sign now, or why they cannot approve. */
  statement: Statement | { refused: string };
  /** The ceiling asked for in the page's query (major units), to show it back. */
  ceiling: Record<string, string>;
  /** That query, for the statement's download (the same statement). */
  query: string;
}

/** Each possible duplicate with its earlier twin (batch, line, external_id, state, date), and who allowed it. */
function possibleDuplicates(p: Preview): string {
  if (p.possible_duplicates.length === 0) return '';
  const rows = p.possible_duplicates.map((d) => [
    String(d.line), esc(d.external_id ?? ''), esc(d.twin.same_file ? `line ${d.twin.line} of this file` : `batch ${d.twin.batch} line ${d.twin.line}`), esc(d.twin.external_id ?? ''), esc(d.twin.state), esc(d.twin.date.slice(0, 10)),
    esc(d.allowed_by ? `allowed by ${d.allowed_by}: ${d.allowed_reason ?? ''}` : d.action === 'hold' ? 'held: not sent until allowed (paybatch allow)' : 'sent, with this warning'),
  ]);
  return `<h2>Possible duplicate payments</h2>
<p>The same recipient account, amount and currency as a row of an earlier batch, or an earlier line of this file (sent first).</p>
${table(['Line', 'External id', 'Earlier row', 'Its external id', 'Its state', 'Its date', 'Standing'], rows)}`;
}

function previewFacts(p: Preview): string {
  return `<dl class="facts">
<dt>Status</dt><dd>${esc(p.status)}</dd>
<dt>File SHA-256</dt><dd><code class="wrap">${esc(p.file_sha256)}</code></dd>
<dt>Rows to send</dt><dd>${p.rows.to_send}${p.rows.invalid > 0 ? `; ${p.rows.invalid} invalid, not sent` : ''}${p.rows.already_used.length > 0 ? `; ${p.rows.already_used.length} refused (external id used by an earlier batch)` : ''}</dd>
<dt>Totals paid out</dt><dd>${money(p.totals)}</dd>
<dt>Largest row</dt><dd>${money(p.largest_row)}</dd>
<dt>Funding estimate</dt><dd>${Object.entries(p.funding_estimate).map(([c, e]) => `${esc(major(e.minor, c))}${e.exact ? '' : ` (approximate${e.rows_without_estimate > 0 ? `; ${e.rows_without_estimate} rows without an estimate` : ''})`}`).join(', ') || 'none'}</dd>
<dt>Proposed ceiling</dt><dd>${money(p.proposed_ceiling)}</dd>
<dt>Approvers needed</dt><dd>${p.required_approvers.count} (${esc(p.required_approvers.because.join('; '))})</dd>
<dt>Decisions so far</dt><dd>${p.approvals.map((a) => `${esc(a.person)} ${esc(a.decision)} at ${esc(a.at)}${a.reason ? `: ${esc(a.reason)}` : ''}`).join('<br>') || 'none'}</dd>
<dt>Expires</dt><dd>${esc(p.expires_at ?? '')}</dd>
${p.inactive_corridors === null ? '' : `<dt>Corridors switched off now</dt><dd>${p.inactive_corridors.map((c) => `${esc(c.corridor)} (${c.rows} rows)`).join('<br>') || 'none'}</dd>`}
</dl>
${possibleDuplicates(p)}
${p.invalid.length > 0 ? `<details><summary>Invalid rows</summary>${table(['Line', 'Column', 'Code', 'Message'], p.invalid.map((i) => [String(i.line), esc(i.column), esc(i.code), esc(i.message)]))}</details>` : ''}`;
}

/** Rows far above the batch's usual amounts, shown before the facts and the form: checked before anyone signs. */
function outlierWarning(p: Preview): string {
  if (p.outliers.length === 0) return '';
  return `<div class="notice warn outliers" role="alert"><p><strong>Amounts to check before approving (${p.outliers.length})</strong></p>
${table(['Line', 'External id', 'Amount', 'Why'], p.outliers.map((o) => [String(o.line), esc(o.external_id), esc(formatMoney(o.amount, o.currency)), esc(o.message)]))}</div>`;
}

/** The statement's amounts are minor units (what is signed); beside them, what they are in major units. */
function statementMoney(signed: Statement): string {
  const list = (minor: Record<string, string>): string => Object.entries(minor).map(([c, v]) => esc(formatMoneyAndMinor(v, c))).join(', ') || 'none';
  return `<dl class="facts statement-money">
<dt>"totals" in major units</dt><dd>${list(signed.totals)}</dd>
<dt>"ceiling" in major units</dt><dd>${list(signed.ceiling)}</dd>
</dl>`;
}

function signForm(viewer: Viewer, batch: string, view: ApprovalView): string {
  if (viewer.readOnly) return '<p class="muted">Approve from the console of paybatch watch, or with paybatch approve.</p>';
  if (!may(viewer.role, 'approve')) return '<p class="muted">Only an approver of the approval policy may approve or reject.</p>';
  const id = encodeURIComponent(batch);
  const proposed = view.preview.proposed_ceiling;
  const ceilingForm = `<h2>Approve</h2>
<form method="get" action="/approvals/${id}" class="filters"><fieldset><legend>Ceiling: the most that may be funded (major units)</legend>
${Object.entries(proposed).map(([c, minor]) => `<label>${esc(c)} <input name="ceiling_${esc(c)}" inputmode="decimal" value="${esc(view.ceiling[c] ?? (minor === null ? '' : plainMajor(minor, c)))}"></label>`).join(' ')}
<button type="submit">Use this ceiling</button></fieldset></form>`;
  const rejectForm = `<h2>Reject</h2>
<form method="post" action="/approvals/${id}/reject" class="stack">${csrfField(viewer)}
<label>Reason (kept in the results and the audit trail) <textarea name="reason" rows="2" required></textarea></label>
<button type="submit" class="danger">Reject: nothing of it is sent</button></form>`;
  if ('refused' in view.statement) return `${ceilingForm}${notice(view.statement.refused, 'error')}${rejectForm}`;
  const signed = view.statement;
  const statement = JSON.stringify(signed, null, 2);
  return `${ceilingForm}
<p>This is what you sign:</p>
<pre class="statement" tabindex="0">${esc(statement)}</pre>
${statementMoney(signed)}
<ol>
<li><a href="/approvals/${id}/statement.json${view.query ? `?${esc(view.query)}` : ''}" download="statement-${esc(batch)}.json">Download the statement</a>.</li>
<li>On your own machine, sign it with your private key: <code>paybatch keys sign --key YOUR.key statement-${esc(batch)}.json</code></li>
<li>Paste the signature it prints:</li>
</ol>
<form method="post" action="/approvals/${id}/approve" class="stack">${csrfField(viewer)}
<input type="hidden" name="statement" value="${esc(JSON.stringify(signed))}">
<label>Signature <textarea name="signature" rows="3" required spellcheck="false" autocomplete="off"></textarea></label>
<button type="submit">Approve with this signature</button></form>
${rejectForm}`;
}

export function approvalPage(viewer: Viewer, batch: string, view: ApprovalView, message?: { text: string; kind: 'ok' | 'error' }): string {
  const body = `${message ? notice(message.text, message.kind) : ''}
<p><a href="/batches/${encodeURIComponent(batch)}">See the batch's rows</a></p>
${outlierWarning(view.preview)}
${previewFacts(view.preview)}
${signForm(viewer, batch, view)}`;
  return page({ title: `Approve ${view.preview.subject}`, viewer, current: '/approvals', body });
}
