/** The batches page and one batch's page. Pure. */
import type { BatchStatus } from '../../engine/status.js';
import type { RowFilter, RowPage } from '../console-data.js';
import { age, esc, fundingLabel, major, payoutLabel } from '../format.js';
import type { Viewer } from './layout.js';
import { page, table } from './layout.js';

const counts = (byState: Record<string, number>): string =>
  Object.entries(byState).map(([state, n]) => `<span class="pill state-${esc(state)}">${esc(state)} ${n}</span>`).join(' ') || '<span class="muted">no rows</span>';

const amounts = (minor: Record<string, string>): string => Object.entries(minor).map(([c, v]) => esc(major(v, c))).join('<br>') || '<span class="muted">none</span>';

/** An amount with what it is ("1,250.00 GBP to pay"), nothing when there is no amount. */
const labelled = (amount: string, label: string): string => (amount ? `${esc(amount)} <span class="muted amount-label">${esc(label)}</span>` : '');

function progress(b: BatchStatus): string {
  const done = b.rows - b.unsettled;
  const percent = b.rows === 0 ? 100 : Math.floor((done * 100) / b.rows);
  // Only rows at the service are "in flight" (batch-stage.ts): a batch awaiting approval or not sent yet says so instead.
  const oldest = b.stage.kind === 'in_flight' && b.oldest_in_flight_age_s !== null ? `, oldest in flight ${age(b.oldest_in_flight_age_s)}` : '';
  const where = b.unsettled > 0 || b.stage.kind === 'rejected' ? `<br><span class="stage stage-${esc(b.stage.kind)}">${esc(b.stage_words)}</span>` : '';
  return `<progress max="${b.rows}" value="${done}" aria-label="rows final in batch ${esc(b.batch)}">${percent}%</progress> <span>${done} of ${b.rows} final${oldest}</span>${where}`;
}

function statusText(b: BatchStatus): string {
  const approval = b.approval ? ` <span class="pill approval-${esc(b.approval)}">approval ${esc(b.approval)}</span>` : '';
  return `${esc(b.status)}${approval}`;
}

export function batchesPage(viewer: Viewer, batches: readonly BatchStatus[]): string {
  const waiting = batches.filter((b) => b.approval === 'awaiting').length;
  const body = `${waiting > 0 ? `<p class="notice warn" role="status"><a href="/approvals">${waiting} batch${waiting === 1 ? '' : 'es'} awaiting approval</a></p>` : ''}
<div data-live-region aria-live="polite">
${table(['Batch', 'File', 'Status', 'Progress', 'Rows by state', 'Paid out', 'Funded'], batches.map((b) => [
    `<a href="/batches/${encodeURIComponent(b.batch)}">${esc(b.batch)}</a>`, esc(b.file), statusText(b), progress(b), counts(b.by_state), amounts(b.paid_out), amounts(b.funded),
  ]), 'Batches of the last seven days, awaiting approval first')}
</div>`;
  return page({ title: 'Batches', viewer, current: '/', body, live: 'batches' });
}

function filterForm(batch: string, filter: RowFilter, rows: RowPage): string {
  const options = (all: Record<string, number>, chosen: string | undefined): string =>
    `<option value="">any</option>${Object.entries(all).sort(([a], [b]) => (a < b ? -1 : 1)).map(([v, n]) => `<option value="${esc(v)}"${v === chosen ? ' selected' : ''}>${esc(v)} (${n})</option>`).join('')}`;
  return `<form method="get" action="/batches/${encodeURIComponent(batch)}" class="filters">
<label>State <select name="state">${options(rows.states, filter.state)}</select></label>
<label>Reason <select name="reason">${options(rows.codes, filter.reason)}</select></label>
<button type="submit">Filter</button></form>`;
}

/** How many rows match, and which are shown: those after a line, on a page after the first. */
function rowsShown(rows: RowPage, filter: RowFilter, after: number): string {
  const from = after > 0 ? `, those after line ${after} shown` : '';
  if (rows.matching === null) return `Rows that match the filter${from}.`;
  return `${rows.matching} row${rows.matching === 1 ? '' : 's'}${filter.state || filter.reason ? ' match' : ''}${from}.`;
}

export function batchPage(viewer: Viewer, b: BatchStatus, filter: RowFilter, rows: RowPage, after: number, limit: number): string {
  const query = (extra: Record<string, string | number>): string => {
    const params = new URLSearchParams();
    if (filter.state) params.set('state', filter.state);
    if (filter.reason) params.set('reason', filter.reason);
    for (const [k, v] of Object.entries(extra)) params.set(k, String(v));
    return params.toString();
  };
  const pager = [
    after > 0 ? `<a href="?${query({})}">First ${limit}</a>` : '',
    rows.next !== null ? `<a href="?${query({ after: rows.next })}">Next ${limit}</a>` : '',
  ].filter(Boolean).join(' · ');
  const id = encodeURIComponent(b.batch);
  const body = `<div data-live-region aria-live="polite">
<dl class="facts">
<dt>File</dt><dd>${esc(b.file)}</dd>
${b.corrects ? `<dt>Corrects</dt><dd><a href="/batches/${encodeURIComponent(b.corrects)}">${esc(b.corrects)}</a></dd>` : ''}
<dt>Status</dt><dd>${statusText(b)}${b.approval_reason ? ` <span class="muted">${esc(b.approval_reason)}</span>` : ''}</dd>
<dt>Received</dt><dd>${esc(b.received_at)}${b.settled_at ? `; settled ${esc(b.settled_at)}` : ''}</dd>
<dt>Progress</dt><dd>${progress(b)}</dd>
<dt>Rows by state</dt><dd>${counts(b.by_state)}</dd>
<dt>Paid out</dt><dd>${amounts(b.paid_out)}</dd>
<dt>Funded</dt><dd>${amounts(b.funded)}</dd>
<dt>Learned</dt><dd>${b.learned.webhook} by webhook, ${b.learned.polling} by polling, ${b.learned.answer} in answers</dd>
</dl>
<p class="downloads">Download the results: <a href="/batches/${id}/results.csv" download>CSV</a> · <a href="/batches/${id}/results.spreadsheet.csv" download>for spreadsheets</a> (semicolons, UTF-8 mark)</p>
<p><a href="/audit?batch=${id}">The audit trail of this batch</a></p>
</div>
<h2>Rows</h2>
${filterForm(b.batch, filter, rows)}
<div data-live-region>
<p>${rowsShown(rows, filter, after)}</p>
${table(['Line', 'External id', 'State', 'Reason', 'Amount', 'Funding', 'Transaction'], rows.rows.map((r) => [
    String(r.line), esc(r.external_id), `<span class="pill state-${esc(r.state)}">${esc(r.state)}</span>`,
    `${r.code ? `<code>${esc(r.code)}</code> ` : ''}${esc(r.reason)}`,
    labelled(major(r.output_amount, r.output_currency), payoutLabel(r.state)),
    labelled(major(r.input_amount, r.input_currency), fundingLabel(r.state, r.funded)), `<code>${esc(r.transaction_id)}</code>`,
  ]), `Rows of batch ${b.batch}`)}
${pager ? `<p class="pager">${pager}</p>` : ''}
</div>`;
  return page({ title: `Batch ${b.batch}`, viewer, current: '/', body, live: `batch:${b.batch}` });
}
