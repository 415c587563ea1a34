/** The console's pages and downloads (GET): read from the store and the workspace, rendered by views/. */
import { once } from 'node:events';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Statement } from '../approvals/statement.js';
import { ApprovalGate } from '../engine/approval-gate.js';
import { statementToSign } from '../engine/approve.js';
import type { ApproveDeps } from '../engine/approve.js';
import type { Preview } from '../engine/preview.js';
import { previewBatch } from '../engine/preview.js';
import type { PayoutClient } from '../api/client.js';
import { PaybatchError } from '../errors.js';
import { RESULT_COLUMNS, resultRecord } from '../reports/results.js';
import { XLSX_MEDIA_TYPE } from '../reports/workbook.js';
import { attentionRows, auditView, batchList, batchRows, batchStatus, reconciliationReports, REPORT_FILE, reportsFolder } from './console-data.js';
import { liveStream } from './live.js';
import type { ConsoleDeps } from './deps.js';
import { approvalPage, approvalsPage } from './views/approvals.js';
import type { ApprovalView } from './views/approvals.js';
import { attentionPage, confirmCancelPage } from './views/attention.js';
import { batchPage, batchesPage } from './views/batches.js';
import type { Viewer } from './views/layout.js';
import { notice, page } from './views/layout.js';
import { loginPage } from './views/login.js';
import { auditPage, reconciliationPage } from './views/records.js';

export const BATCH_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/;
const ROWS_PER_PAGE = 200;
const AUDIT_PER_PAGE = 100;

type Query = Record<string, string | undefined>;
/** A query's values, strings only: a repeated or odd parameter counts as absent. */
export const strings = (value: unknown): Query =>
  Object.fromEntries(Object.entries((value ?? {}) as Record<string, unknown>).filter(([, v]) => typeof v === 'string')) as Query;
const query = (request: FastifyRequest): Query => strings(request.query);
const viewerOf = (request: FastifyRequest): Viewer => request.viewer as Viewer;
const html = (reply: FastifyReply, body: string, status = 200): FastifyReply => reply.code(status).type('text/html; charset=utf-8').send(body);

export function notFound(reply: FastifyReply, viewer: Viewer, what: string): FastifyReply {
  return html(reply, page({ title: 'Not found', viewer, body: notice(what, 'error') }), 404);
}

/** What an approval needs besides the store: the policy, and a gate to work out the batch's facts. */
export function approveDeps(deps: ConsoleDeps): ApproveDeps | null {
  const policy = deps.config.approvalPolicy;
  if (!policy) return null;
  return { store: deps.store, gate: new ApprovalGate(policy, deps.store, deps.clock, deps.config.approvals.estimate_rates), policy, clock: deps.clock, marginPercent: deps.config.approvals.ceiling_margin_percent };
}

/** The ceiling a page's query asks for: ceiling_USD=2500.00. */
export function ceilingOf(q: Query): Record<string, string> {
  const ceiling: Record<string, string> = {};
  for (const [key, value] of Object.entries(q)) {
    const match = /^ceiling_([A-Z]{3})$/.exec(key);
    if (match && value) ceiling[match[1] as string] = value.trim();
  }
  return ceiling;
}

async function statementFor(deps: ConsoleDeps, approve: ApproveDeps, batch: string, person: string, ceiling: Record<string, string>): Promise<Statement | { refused: string }> {
  try {
    return await statementToSign({ batch, as: person, ceiling }, approve);
  } catch (error) {
    if (error instanceof PaybatchError) return { refused: error.message };
    throw error;
  }
}

/** How long a page waits on the service for the corridors switched off now; then it is drawn without them. */
const CORRIDORS_WAIT_MS = 2_000;

/** The preview, with the corridors switched off now when the service answers within a moment; a page never waits longer on it. */
async function previewWithCorridors(deps: ConsoleDeps, batch: string): Promise<Preview | null> {
  const client = deps.actions?.client;
  const base = { store: deps.store, config: deps.config, clock: deps.clock };
  if (!client) return previewBatch(batch, { ...base, client: null });
  const bounded = {
    listCorridors: (country: string) => Promise.race([
      client.listCorridors(country),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the service did not answer in time')), CORRIDORS_WAIT_MS).unref()),
    ]),
  } as Pick<PayoutClient, 'listCorridors'>;
  try {
    return await previewBatch(batch, { ...base, client: bounded });
  } catch {
    return previewBatch(batch, { ...base, client: null });
  }
}

export async function approvalView(deps: ConsoleDeps, approve: ApproveDeps, batch: string, viewer: Viewer, q: Query): Promise<ApprovalView | null> {
  const preview = await previewWithCorridors(deps, batch);
  if (!preview) return null;
  const ceiling = ceilingOf(q);
  const params = new URLSearchParams(Object.entries(ceiling).map(([c, v]) => [`ceiling_${c}`, v] as [string, string]));
  return { preview, statement: await statementFor(deps, approve, batch, viewer.person, ceiling), ceiling, query: params.toString() };
}

async function sendResults(deps: ConsoleDeps, reply: FastifyReply, batch: string, spreadsheet: boolean): Promise<FastifyReply> {
  // For spreadsheets: the UTF-8 mark, semicolons (what a spreadsheet in most locales splits on), and a decimal comma in the major amounts.
  const csv = stringify({ header: true, columns: [...RESULT_COLUMNS], delimiter: spreadsheet ? ';' : ',', bom: spreadsheet, record_delimiter: '\r\n' });
  void (async () => {
    for await (const row of deps.store.resultRows(batch)) if (!csv.write(resultRecord(row, { decimalComma: spreadsheet }, batch))) await once(csv, 'drain');
    csv.end();
  })().catch((error: unknown) => csv.destroy(error as Error));
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${batch}.results${spreadsheet ? '.spreadsheet' : ''}.csv"`)
    .send(csv);
}

/** A report file of this workspace's reports folder: a regular file, never followed through a link. */
async function sendReport(deps: ConsoleDeps, reply: FastifyReply, viewer: Viewer, name: string): Promise<FastifyReply> {
  if (!REPORT_FILE.test(name)) return notFound(reply, viewer, 'no such report file');
  let handle;
  try {
    handle = await open(join(reportsFolder(deps.workspace), name), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return notFound(reply, viewer, `${name} is not in this workspace's reports`);
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    return notFound(reply, viewer, 'no such report file');
  }
  return reply
    .type(name.endsWith('.json') ? 'application/json; charset=utf-8' : name.endsWith('.xlsx') ? XLSX_MEDIA_TYPE : 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}"`)
    .send(handle.createReadStream());
}

export function registerPages(app: FastifyInstance, deps: ConsoleDeps): void {
  const { store, clock } = deps;

  app.get('/login', { config: { open: true } }, async (_request, reply) => html(reply, loginPage(reply.generateCsrf())));

  app.get('/', async (request, reply) => html(reply, batchesPage(viewerOf(request), await batchList(store, clock))));

  app.get<{ Params: { id: string } }>('/batches/:id', async (request, reply) => {
    const viewer = viewerOf(request);
    const { id } = request.params;
    const summary = BATCH_ID.test(id) ? await batchStatus(store, clock, id) : null;
    if (!summary) return notFound(reply, viewer, `no batch ${id}`);
    const q = query(request);
    const filter = { state: q.state || undefined, reason: q.reason || undefined };
    // A keyset: the line the page goes on after, never an offset counted through every row before it.
    const after = Math.max(0, Number.parseInt(q.after ?? '0', 10) || 0);
    return html(reply, batchPage(viewer, summary.status, filter, await batchRows(store, summary, filter, after, ROWS_PER_PAGE), after, ROWS_PER_PAGE));
  });

  for (const spreadsheet of [false, true]) {
    app.get<{ Params: { id: string } }>(`/batches/:id/results${spreadsheet ? '.spreadsheet' : ''}.csv`, async (request, reply) => {
      const { id } = request.params;
      if (!BATCH_ID.test(id) || !(await store.batch(id))) return notFound(reply, viewerOf(request), `no batch ${id}`);
      return sendResults(deps, reply, id, spreadsheet);
    });
  }

  app.get('/attention', async (request, reply) => html(reply, attentionPage(viewerOf(request), await attentionRows(store, clock))));

  app.get('/attention/cancel', async (request, reply) => {
    const viewer = viewerOf(request);
    const q = query(request);
    const row = (await attentionRows(store, clock)).find((a) => a.batch === q.batch && String(a.line) === q.line);
    if (!row) return notFound(reply, viewer, 'that row does not need attention (any more)');
    return html(reply, confirmCancelPage(viewer, row));
  });

  app.get('/approvals', async (request, reply) => html(reply, approvalsPage(viewerOf(request), await batchList(store, clock))));

  app.get<{ Params: { id: string } }>('/approvals/:id', async (request, reply) => {
    const viewer = viewerOf(request);
    const approve = approveDeps(deps);
    if (!approve) return html(reply, page({ title: 'Approvals', viewer, current: '/approvals', body: notice('Approvals are off (approvals.enabled is false).') }));
    const view = BATCH_ID.test(request.params.id) ? await approvalView(deps, approve, request.params.id, viewer, query(request)) : null;
    if (!view) return notFound(reply, viewer, `no batch ${request.params.id}`);
    return html(reply, approvalPage(viewer, request.params.id, view));
  });

  app.get<{ Params: { id: string } }>('/approvals/:id/statement.json', async (request, reply) => {
    const viewer = viewerOf(request);
    const approve = approveDeps(deps);
    if (!approve || !BATCH_ID.test(request.params.id)) return notFound(reply, viewer, 'no statement to sign');
    const statement = await statementFor(deps, approve, request.params.id, viewer.person, ceilingOf(query(request)));
    if ('refused' in statement) return reply.code(409).type('text/plain').send(`${statement.refused}\n`);
    return reply.type('application/json').header('content-disposition', `attachment; filename="statement-${request.params.id}.json"`).send(`${JSON.stringify(statement, null, 2)}\n`);
  });

  app.get('/reconciliation', async (request, reply) => html(reply, reconciliationPage(viewerOf(request), await reconciliationReports(store, deps.workspace))));

  app.get<{ Params: { name: string } }>('/reconciliation/files/:name', async (request, reply) => sendReport(deps, reply, viewerOf(request), request.params.name));

  app.get('/audit', async (request, reply) => {
    const q = query(request);
    const before = Number.parseInt(q.before ?? '', 10);
    const filter = { action: q.action?.trim().slice(0, 100) || undefined, batch: q.batch?.trim().slice(0, 100) || undefined };
    const view = await auditView(store, AUDIT_PER_PAGE, { ...filter, before: Number.isFinite(before) ? before : undefined }, new Date(clock.now()).toISOString());
    return html(reply, auditPage(viewerOf(request), view, filter, AUDIT_PER_PAGE));
  });

  const streams = { open: 0, bySession: new Map<string, number>(), closers: new Set<() => void>() };
  app.addHook('onClose', async () => {
    for (const close of streams.closers) close();
  });
  app.get('/live', async (request, reply) => liveStream(deps, streams, request, reply, query(request).what ?? ''));
}
