/**
 * The console's CSRF tokens, bound to what they protect. A signed-in person's
 * token is an HMAC of their session token: it passes with that session and no
 * other, so a token (and cookie) taken from the sign-in page, or from another
 * person's session, is refused even where SameSite does not stop the request.
 * A new session (each sign-in makes a fresh one) has a fresh token. The sign-in
 * form, before any session, is bound the same way to a random cookie of its own.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const SIGN_IN_COOKIE = 'paybatch_csrf';

/** The two things a token can be bound to: a session, or the sign-in form's cookie. */
type Binding = 'session' | 'sign-in';

export function csrfToken(key: Buffer, binding: Binding, secret: string): string {
  return createHmac('sha256', key).update(`paybatch console csrf\0${binding}\0${secret}`).digest('base64url');
}

/** Whether `given` is the token of `binding` for `secret`, compared in constant time. */
export function csrfMatches(key: Buffer, binding: Binding, secret: string | undefined, given: unknown): boolean {
  if (!secret || typeof given !== 'string' || given.length > 100) return false;
  const expected = Buffer.from(csrfToken(key, binding, secret));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Refused with this (403) by the error handler, which shows its message. */
function refused(): Error {
  return Object.assign(new Error('this form\'s token is not one of your session: reload the page and try again'), { statusCode: 403 });
}

/**
 * Decorates the app with `csrfProtection` (a route's preHandler) and
 * `reply.generateCsrf()` (the token a page's forms carry). Both read
 * `request.sessionToken`, set by the server's preHandler once a session is
 * known good; where it is null (the sign-in page), the sign-in cookie counts.
 * `key` is the secret of console.cookie_secret_file, or the process's own.
 */
export function registerCsrf(app: FastifyInstance, key: Buffer, cookieOpts: { secure: boolean }): void {
  const cookie = { httpOnly: true, sameSite: 'strict' as const, path: '/', secure: cookieOpts.secure };
  app.decorateReply('generateCsrf', function generateCsrf(this: FastifyReply): string {
    const { sessionToken } = this.request;
    if (sessionToken) return csrfToken(key, 'session', sessionToken);
    let secret = this.request.cookies[SIGN_IN_COOKIE];
    if (!secret || secret.length > 100) {
      secret = randomBytes(32).toString('base64url');
      this.setCookie(SIGN_IN_COOKIE, secret, cookie);
    }
    return csrfToken(key, 'sign-in', secret);
  });
  app.decorate('csrfProtection', async function csrfProtection(request: FastifyRequest): Promise<void> {
    const given = (request.body as Record<string, unknown> | undefined)?._csrf;
    const ok = request.sessionToken
      ? csrfMatches(key, 'session', request.sessionToken, given)
      : csrfMatches(key, 'sign-in', request.cookies[SIGN_IN_COOKIE], given);
    if (!ok) throw refused();
  });
}
