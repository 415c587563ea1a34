/**
 * The operations console's HTTP server (fastify): sign-in, sessions in
 * HttpOnly SameSite=Strict cookies, a CSRF token bound to the session on every
 * form (csrf.ts), limits on wrong sign-in codes (sign-in-guard.ts), static
 * assets served from the package, and the pages' routes (routes.ts,
 * actions.ts). Served by `paybatch watch` on console.listen, where it may act
 * (cancel, approve, reject), and by `paybatch console`, read-only.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { sessionPerson } from './auth.js';
import { registerCsrf } from './csrf.js';
import { guardSignIn } from './sign-in-guard.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { consoleRole } from './roles.js';
import { registerActions } from './actions.js';
import { registerPages } from './routes.js';
import type { ConsoleDeps } from './deps.js';
import { SESSION_COOKIE } from './deps.js';
import { ConfigError } from '../errors.js';

/** The assets folder of the package: beside dist/ when built, beside src/ under the tests. */
function assetsFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    const candidate = join(dir, 'assets', 'console');
    try {
      readFileSync(join(candidate, 'console.css'));
      return candidate;
    } catch {
      dir = dirname(dir);
    }
  }
  throw new ConfigError('the console\'s assets (assets/console) are missing from this installation');
}

/** The key CSRF tokens are made with: console.cookie_secret_file's, the same on every worker, or this process's own. */
function csrfKey(config: Config): Buffer {
  const file = config.console.cookie_secret_file;
  if (!file) return randomBytes(32);
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(`cannot read console.cookie_secret_file ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (secret.length < 32) throw new ConfigError(`console.cookie_secret_file ${file} must hold 32 characters or more`);
  return Buffer.from(secret, 'utf8');
}

/** Headers on every answer: nothing from elsewhere, no framing, no caching of pages holding payouts. */
function hardenHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
}

export async function buildConsole(deps: ConsoleDeps): Promise<FastifyInstance> {
  // Behind one proxy, the client is the last address it put in X-Forwarded-For (trusting the connection's peer, hop 0, and no
  // further: what the client itself wrote before that is not believed); without console.trust_proxy the header is ignored.
  const trustProxy = deps.config.console.trust_proxy ? (_address: string, hop: number): boolean => hop === 0 : false;
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024, trustProxy, forceCloseConnections: true });
  const secure = deps.config.console.secure_cookies;
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);
  // Forms only: a JSON body is not something a page of the console sends.
  app.removeContentTypeParser('application/json');
  registerCsrf(app, csrfKey(deps.config), { secure });
  await app.register(fastifyStatic, { root: assetsFolder(), prefix: '/assets/', decorateReply: false, index: false, dotfiles: 'deny' });

  app.decorateRequest('viewer', null);
  app.decorateRequest('sessionToken', null);
  app.addHook('onSend', async (_request, reply, payload) => {
    hardenHeaders(reply);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  // Who is asking: every route but the open ones needs a session of a person the configuration knows.
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.routeOptions.config?.open || request.url.startsWith('/assets/')) return;
    const token = request.cookies[SESSION_COOKIE];
    const person = await sessionPerson(deps.store, token, deps.clock);
    const role = person === null ? null : consoleRole({ approvals: deps.config.approvals.people, console: deps.config.console.people }, person);
    if (person === null || role === null) {
      if (request.method === 'GET' && !request.url.startsWith('/live')) return reply.redirect('/login', 303);
      return reply.code(401).type('text/plain').send('sign in first\n');
    }
    request.sessionToken = token as string;
    request.viewer = { person, role, csrf: reply.generateCsrf(), readOnly: deps.actions === null };
  });
  guardSignIn(app, deps, new SignInThrottle(deps.clock));
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    // A refused CSRF token, a body too large: the error's own words. Anything else: a line in the log, nothing of it on the page.
    if (status >= 500) deps.log('console_error', { method: request.method, route: request.routeOptions.url ?? '', error: error.message });
    return reply.code(status).type('text/plain').send(status >= 500 ? 'the console could not answer: see paybatch.log\n' : `${error.message}\n`);
  });

  app.get('/healthz', { config: { open: true } }, async () => ({ status: 'ok' }));
  if (deps.metrics) {
    const metrics = deps.metrics;
    app.get('/metrics', { config: { open: true } }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.scrape()));
  }
  registerPages(app, deps);
  registerActions(app, deps, secure);
  return app;
}

export interface ConsoleServer {
  url: string;
  close(): Promise<void>;
}

export async function startConsole(deps: ConsoleDeps, listen: { host: string; port: number }): Promise<ConsoleServer> {
  const app = await buildConsole(deps);
  await app.listen({ host: listen.host, port: listen.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : listen.port;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return { url: `http://${host}:${port}`, close: () => app.close() };
}
