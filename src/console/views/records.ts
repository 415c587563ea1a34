/** The reconciliation and audit pages: what accounting signs off. Pure. */
import type { AuditFilter, AuditView, ReconciliationReport } from '../console-data.js';
import { withoutUrlCredentials } from '../../api/redact.js';
import { esc } from '../format.js';
import type { Viewer } from './layout.js';
import { notice, page, table } from './layout.js';

export function reconciliationPage(viewer: Viewer, reports: readonly ReconciliationReport[]): string {
  const body = `<p>Each report as it was written (by the daily schedule or <code>paybatch report</code>), newest first. A report to sign off says <strong>0 differences</strong>: every check ran and found none. An <strong>incomplete</strong> report (amber) names the check it could not make, such as a service that offers no ledger: it cannot be signed off as it is.</p>
${table(['Period', 'Written', 'Checks', 'Files'], reports.map((r) => [
    esc(r.label), esc(r.at), `<span class="${r.tone}">${esc(r.differences)}</span>`,
    r.files.map((f) => `<a href="/reconciliation/files/${encodeURIComponent(f)}" download>${esc(f.replace(/^reconciliation-/, ''))}</a>`).join('<br>') || '<span class="muted">not in this workspace</span>',
  ]), 'Reconciliation reports')}`;
  return page({ title: 'Reconciliation', viewer, current: '/reconciliation', body });
}

/** An entry's details as a person reads them: indented, any URL's credentials left out, and shown as stored when they are not JSON (an edited entry). */
function shownDetails(details: string): string {
  let text: string;
  try {
    text = JSON.stringify(JSON.parse(details), null, 2);
  } catch {
    text = details;
  }
  return withoutUrlCredentials(text);
}

function auditFilterForm(view: AuditView, filter: AuditFilter): string {
  const actions = Object.entries(view.actions).sort(([a], [b]) => (a < b ? -1 : 1));
  const chosen = filter.action && !(filter.action in view.actions) ? [[filter.action, 0] as const, ...actions] : actions;
  return `<form method="get" action="/audit" class="filters">
<label>Action <select name="action"><option value="">any</option>${chosen.map(([a, n]) => `<option value="${esc(a)}"${a === filter.action ? ' selected' : ''}>${esc(a)} (${n})</option>`).join('')}</select></label>
<label>Batch <input name="batch" value="${esc(filter.batch ?? '')}" size="24" spellcheck="false" autocomplete="off"></label>
<button type="submit">Filter</button></form>`;
}

/** What the page shows, in words: the filter and how many entries it lets through. */
function filterShown(view: AuditView, filter: AuditFilter): string {
  const what = [filter.action ? `action <code>${esc(filter.action)}</code>` : '', filter.batch ? `batch <code>${esc(filter.batch)}</code>` : ''].filter(Boolean);
  if (what.length === 0) return `<p class="filter-shown">All ${view.chain.entries} entries, newest first.</p>`;
  const counted = view.matching === null ? 'Entries' : `${view.matching} of ${view.chain.entries} entries`;
  return `<p class="filter-shown" role="status">${counted} with ${what.join(' and ')}, newest first. <a href="/audit">Show all</a></p>`;
}

/** What the kept verification covers: each view checks only the entries after it; the full check is the command's. */
function verifiedWords(chain: AuditView['chain']): string {
  if (chain.verified.seq === 0) return '';
  return `Verified up to entry ${chain.verified.seq} at ${esc(chain.verified.at ?? '')}: each view checks the entries written since the last check; <code>paybatch audit verify</code> checks every entry again.`;
}

export function auditPage(viewer: Viewer, view: AuditView, filter: AuditFilter, limit: number): string {
  const { chain } = view;
  const status = chain.broken
    ? notice(`The chain is broken at entry ${chain.broken.seq}: ${chain.broken.kind}. ${chain.broken.message}`, 'error')
    : `<p class="notice ok" role="status">The chain of ${chain.entries} entries verifies${chain.head ? `; its head is <code class="wrap">${esc(chain.head)}</code>` : ''}. ${verifiedWords(chain)}</p>`;
  const oldest = view.entries[view.entries.length - 1];
  const older = new URLSearchParams();
  if (filter.action) older.set('action', filter.action);
  if (filter.batch) older.set('batch', filter.batch);
  if (oldest) older.set('before', String(oldest.seq));
  const body = `${status}
${auditFilterForm(view, filter)}
${filterShown(view, filter)}
${table(['#', 'At', 'Who', 'What', 'Subject', 'Details'], view.entries.map((e) => [
    String(e.seq), esc(e.at), esc(e.actor), esc(e.action), esc(e.subject), `<details><summary>details</summary><pre>${esc(shownDetails(e.details))}</pre></details>`,
  ]), 'The audit trail, newest first')}
${oldest && view.more ? `<p class="pager"><a href="/audit?${esc(older.toString())}">Older ${limit}</a></p>` : ''}`;
  return page({ title: 'Audit trail', viewer, current: '/audit', body });
}
