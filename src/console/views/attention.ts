/** The attention page, and the confirmation asked before a cancellation. Pure. */
import type { AttentionItem } from '../console-data.js';
import { may } from '../roles.js';
import { age, esc, major } from '../format.js';
import type { Viewer } from './layout.js';
import { csrfField, notice, page, table } from './layout.js';

const rowLink = (a: Pick<AttentionItem, 'batch' | 'line'>): string => `<a href="/batches/${encodeURIComponent(a.batch)}">${esc(a.batch)}</a> line ${a.line}`;

function cancelCell(viewer: Viewer, a: AttentionItem): string {
  if (!a.cancellable) return `<span class="muted">${esc(a.not_cancellable ?? 'not to be cancelled from here')}</span>`;
  if (viewer.readOnly) return '<span class="muted">cancel from the console of paybatch watch</span>';
  if (!may(viewer.role, 'cancel')) return '<span class="muted">an operator may cancel</span>';
  return `<a class="button danger" href="/attention/cancel?batch=${encodeURIComponent(a.batch)}&amp;line=${a.line}">Cancel…</a>`;
}

export function attentionPage(viewer: Viewer, rows: readonly AttentionItem[], message?: { text: string; kind: 'ok' | 'error' }): string {
  const body = `${message ? notice(message.text, message.kind) : ''}
<p>Rows of open batches the service holds for a person (manual, stuck, error, exception), and rows whose answer from the service did not match what was asked; the oldest first.</p>
<div data-live-region aria-live="polite">
${table(['Row', 'External id', 'State', 'For', 'Amount', 'The service says', 'What to do', ''], rows.map((a) => [
    rowLink(a), esc(a.external_id), `<span class="pill state-${esc(a.state)}">${esc(a.state)}</span>`, esc(age(a.age_s)), esc(major(a.output_amount, a.output_currency)),
    `${a.code ? `<code>${esc(a.code)}</code> ` : ''}${esc(a.reason)}`, esc(a.action), cancelCell(viewer, a),
  ]), 'Rows that need a person')}
</div>`;
  return page({ title: 'Attention', viewer, current: '/attention', body, live: 'attention' });
}

export function confirmCancelPage(viewer: Viewer, a: AttentionItem): string {
  const body = `<p class="notice warn">Cancel the payout of ${rowLink(a)} (external id <code>${esc(a.external_id)}</code>, ${esc(major(a.output_amount, a.output_currency))}, now <strong>${esc(a.state)}</strong>)?</p>
<p>The service is asked to cancel the transaction; if the money was already paid out it cannot be, and the row stays as it is. The row's result then says who cancelled it.</p>
<form method="post" action="/attention/cancel">${csrfField(viewer)}
<input type="hidden" name="batch" value="${esc(a.batch)}"><input type="hidden" name="line" value="${a.line}">
<button type="submit" class="danger" name="confirm" value="yes">Yes, cancel this payout</button> <a href="/attention">No, go back</a></form>`;
  return page({ title: 'Cancel a payout', viewer, current: '/attention', body });
}
