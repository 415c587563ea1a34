/**
 * The sign-in limits (sign-in-throttle.ts) on `POST /login`: before the form is
 * looked at, the attempt is counted for the name typed and the client's address,
 * or refused (429, with Retry-After) when a limit is reached; once answered, a
 * sign-in (303) or a refused form token (403) is not counted. The client's
 * address is the connection's, or with console.trust_proxy the one the proxy
 * in front put last in X-Forwarded-For (fastify's request.ip, trusting one hop).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SignInAttempt, SignInThrottle } from './sign-in-throttle.js';
import type { ConsoleDeps } from './deps.js';
import { consoleRole } from './roles.js';
import { loginPage } from './views/login.js';

const isSignIn = (request: FastifyRequest): boolean => request.method === 'POST' && request.routeOptions.url === '/login';

function typedName(request: FastifyRequest): string {
  const name = (request.body as Record<string, unknown> | undefined)?.name;
  return typeof name === 'string' ? name.trim() : '';
}

const waitText = (ms: number): string => {
  const minutes = Math.ceil(ms / 60_000);
  return minutes <= 1 ? 'a minute' : `${minutes} minutes`;
};

export function guardSignIn(app: FastifyInstance, deps: ConsoleDeps, throttle: SignInThrottle): void {
  const attempts = new WeakMap<FastifyRequest, SignInAttempt>();

  app.addHook('preHandler', async (request, reply) => {
    if (!isSignIn(request)) return;
    const name = typedName(request);
    const known = consoleRole({ approvals: deps.config.approvals.people, console: deps.config.console.people }, name) !== null;
    const verdict = throttle.attempt(request.ip, known ? name : null);
    if (verdict.allowed) {
      attempts.set(request, verdict.attempt);
      return;
    }
    deps.log('console_sign_in_throttled', { person: known ? name : '(not a person of the configuration)', address: request.ip, limit: verdict.limit });
    const message = `Too many wrong codes (${verdict.limit === 'address' ? 'from this address' : verdict.limit === 'person' ? `for ${name}` : `for ${name} from this address`}): try again in ${waitText(verdict.retryAfterMs)}.`;
    return reply
      .code(429)
      .header('retry-after', String(Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))))
      .type('text/html; charset=utf-8')
      .send(loginPage(reply.generateCsrf(), message, name.slice(0, 64)));
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const attempt = attempts.get(request);
    if (attempt) {
      attempts.delete(request);
      if (reply.statusCode === 303) attempt.succeeded();
      else if (reply.statusCode === 403) attempt.notTried();
      // Anything else (401: a wrong code; 5xx) stays counted.
    }
    return payload;
  });
}
