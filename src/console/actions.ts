/**
 * What the console changes (POST), each behind the CSRF check, the person's
 * role, and, for cancel, approve and reject, a console that may act (the one
 * `paybatch watch` serves). Every action is kept in the audit trail by the use
 * case it calls, under the person's name; sign-ins are kept there too.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseStatement } from '../approvals/statement.js';
import { personNameProblem } from '../audit/names.js';
import { recordSignedApproval, rejectBatch } from '../engine/approve.js';
import { PaybatchError } from '../errors.js';
import { signIn, signOut } from './auth.js';
import { attentionRows } from './console-data.js';
import { consoleRole, may } from './roles.js';
import type { ConsoleAction } from './roles.js';
import { approvalView, approveDeps, BATCH_ID, notFound, strings } from './routes.js';
import type { ConsoleDeps } from './deps.js';
import { SESSION_COOKIE } from './deps.js';
import { approvalPage } from './views/approvals.js';
import { attentionPage } from './views/attention.js';
import type { Viewer } from './views/layout.js';
import { notice, page } from './views/layout.js';
import { loginPage } from './views/login.js';

type Form = Record<string, string | undefined>;
const form = (request: FastifyRequest): Form => strings(request.body);
const html = (reply: FastifyReply, body: string, status = 200): FastifyReply => reply.code(status).type('text/html; charset=utf-8').send(body);

/** Refuses (403) a person whose role may not, or a console that may not act; null when allowed. */
function refusal(deps: ConsoleDeps, viewer: Viewer, action: ConsoleAction): string | null {
  if (deps.actions === null) return 'this console is read-only (paybatch console): act from the console of paybatch watch';
  if (!may(viewer.role, action)) return `${viewer.person} (${viewer.role}) may not ${action}`;
  return null;
}

/** Signing in with a one-time code, and out. */
function registerSignIn(app: FastifyInstance, deps: ConsoleDeps, secure: boolean): void {
  const { store, clock } = deps;
  const csrf = { preHandler: app.csrfProtection };

  app.post('/login', { ...csrf, config: { open: true } }, async (request, reply) => {
    const { name = '', code = '' } = form(request);
    const person = name.trim();
    // Refused before any lookup: a name with a control character is never a person's (src/audit/names.ts).
    const badName = personNameProblem(person);
    if (badName && person !== '') return html(reply, loginPage(reply.generateCsrf(), `That name cannot be signed in: ${badName}.`), 400);
    const known = consoleRole({ approvals: deps.config.approvals.people, console: deps.config.console.people }, person) !== null;
    const token = known && code ? await signIn(store, person, code, clock, deps.config.console.session_ms) : null;
    if (!token) {
      deps.log('console_sign_in_refused', { person: known ? person : '(not a person of the configuration)' });
      return html(reply, loginPage(reply.generateCsrf(), 'That name and code do not match a code that is still good: ask for a new one (paybatch console login NAME).', person.slice(0, 64)), 401);
    }
    await store.appendAudit({ at: new Date(clock.now()).toISOString(), actor: person, action: 'console_signed_in', subject: 'console', details: {} });
    deps.log('console_signed_in', { person });
    reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure, path: '/', maxAge: Math.floor(deps.config.console.session_ms / 1000) });
    return reply.redirect('/', 303);
  });

  app.post('/logout', csrf, async (request, reply) => {
    await signOut(store, request.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });
}

export function registerActions(app: FastifyInstance, deps: ConsoleDeps, secure: boolean): void {
  const { store, clock } = deps;
  const csrf = { preHandler: app.csrfProtection };

  registerSignIn(app, deps, secure);

  app.post('/attention/cancel', csrf, async (request, reply) => {
    const viewer = request.viewer as Viewer;
    const refused = refusal(deps, viewer, 'cancel');
    if (refused) return html(reply, attentionPage(viewer, await attentionRows(store, clock), { text: refused, kind: 'error' }), 403);
    const { batch = '', line = '', confirm } = form(request);
    const row = (await attentionRows(store, clock)).find((a) => a.batch === batch && String(a.line) === line);
    if (!row) return notFound(reply, viewer, 'that row does not need attention (any more)');
    if (!row.cancellable) return notFound(reply, viewer, `that row is not to be cancelled: ${row.not_cancellable ?? 'not from here'}`);
    if (confirm !== 'yes') return reply.redirect(`/attention/cancel?batch=${encodeURIComponent(batch)}&line=${row.line}`, 303);
    const outcome = await deps.actions!.cancel(row.batch, row.line, viewer.person);
    deps.log('console_cancel', { person: viewer.person, batch: row.batch, line: row.line, done: outcome.done, state: outcome.state });
    const message = outcome.done
      ? { text: `Line ${row.line} of ${row.batch}: the service was asked to cancel it (now ${outcome.state}).`, kind: 'ok' as const }
      : { text: `Line ${row.line} of ${row.batch} was not cancelled: ${outcome.reason}`, kind: 'error' as const };
    return html(reply, attentionPage(viewer, await attentionRows(store, clock), message), outcome.done ? 200 : 409);
  });

  app.post<{ Params: { id: string } }>('/approvals/:id/approve', csrf, async (request, reply) => {
    const viewer = request.viewer as Viewer;
    const batch = request.params.id;
    const approve = approveDeps(deps);
    if (!approve || !BATCH_ID.test(batch)) return notFound(reply, viewer, 'nothing to approve');
    const answer = async (message: { text: string; kind: 'ok' | 'error' }, status: number): Promise<FastifyReply> => {
      const view = await approvalView(deps, approve, batch, viewer, {});
      return html(reply, view ? approvalPage(viewer, batch, view, message) : page({ title: 'Approve', viewer, current: '/approvals', body: notice(message.text, message.kind) }), status);
    };
    const refused = refusal(deps, viewer, 'approve');
    if (refused) return html(reply, page({ title: 'Approve', viewer, current: '/approvals', body: notice(refused, 'error') }), 403);
    const { statement: text = '', signature = '' } = form(request);
    const statement = parseStatement(text);
    if (typeof statement === 'string') return answer({ text: `The statement sent is not one: ${statement}`, kind: 'error' }, 422);
    if (statement.batch !== batch) return answer({ text: 'The statement is of another batch', kind: 'error' }, 422);
    try {
      const verdict = await recordSignedApproval({ batch, as: viewer.person, statement, signature: signature.trim() }, approve);
      deps.log('console_approved', { person: viewer.person, batch, verdict: verdict.kind });
      const text = verdict.kind === 'approved' ? `Batch ${batch} is approved (${verdict.approvers.join(', ')}): it is sent at the next pass.` : `Your approval of ${batch} is kept. ${verdict.kind === 'waiting' ? verdict.reason : verdict.kind}`;
      return html(reply, page({ title: 'Approved', viewer, current: '/approvals', body: `${notice(text)}<p><a href="/batches/${encodeURIComponent(batch)}">Follow the batch</a> · <a href="/approvals">Other approvals</a></p>` }));
    } catch (error) {
      if (error instanceof PaybatchError) return answer({ text: error.message, kind: 'error' }, 422);
      throw error;
    }
  });

  app.post<{ Params: { id: string } }>('/approvals/:id/reject', csrf, async (request, reply) => {
    const viewer = request.viewer as Viewer;
    const batch = request.params.id;
    const approve = approveDeps(deps);
    if (!approve || !BATCH_ID.test(batch)) return notFound(reply, viewer, 'nothing to reject');
    const refused = refusal(deps, viewer, 'approve');
    if (refused) return html(reply, page({ title: 'Reject', viewer, current: '/approvals', body: notice(refused, 'error') }), 403);
    try {
      await rejectBatch({ batch, as: viewer.person, reason: form(request).reason ?? '' }, approve);
    } catch (error) {
      if (error instanceof PaybatchError) return html(reply, page({ title: 'Reject', viewer, current: '/approvals', body: notice(error.message, 'error') }), 422);
      throw error;
    }
    deps.log('console_rejected', { person: viewer.person, batch });
    return html(reply, page({ title: 'Rejected', viewer, current: '/approvals', body: `${notice(`Batch ${batch} is rejected: nothing of it is sent.`)}<p><a href="/approvals">Other approvals</a></p>` }));
  });
}
