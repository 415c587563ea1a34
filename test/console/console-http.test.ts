/**
 * The console's refusals, over real HTTP against a real `paybatch watch` (and a
 * read-only `paybatch console` beside it): no CSRF token or another browser's,
 * a role that may not, a console that may not act, a used or wrong code, the
 * sign-in limits (more in console-throttle.test.ts); the session cookie's
 * flags; signing out; a CSRF token bound to its session; live streams capped
 * per session.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import type { ConsoleSite } from '../helpers/console-site.js';
import { startConsoleSite } from '../helpers/console-site.js';
import { Visitor } from '../helpers/console-visitor.js';

describe('the console refuses what it must', () => {
  let site: ConsoleSite;
  beforeAll(async () => {
    site = await startConsoleSite();
  }, 60_000);
  afterAll(async () => site?.stop());

  it('sign-in: a code works once, for its person; the session cookie is HttpOnly and SameSite=Strict; signing out ends it', { timeout: 60_000 }, async () => {
    const anyone = new Visitor(site.url);
    const first = await anyone.request('/');
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/login');
    const code = await site.code('vic');
    await anyone.request('/login');
    expect((await anyone.post('/login', { name: 'vic', code })).status, 'no CSRF token').toBe(403);
    expect((await anyone.post('/login', { _csrf: anyone.token, name: 'olga', code })).status, 'another person\'s code').toBe(401);
    expect((await anyone.post('/login', { _csrf: anyone.token, name: 'vic', code: 'AAAAA-AAAAA' })).status, 'a wrong code').toBe(401);
    const twice = await anyone.request('/login', { method: 'POST', form: {} });
    expect(twice.status, 'no CSRF token, no name').toBe(403);
    const signedIn = await anyone.post('/login', { _csrf: anyone.token, name: 'vic', code: code.toLowerCase().replace('-', ' ') });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith('paybatch_session=')) as string;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const page = await anyone.request('/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('vic (viewer)');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const again = new Visitor(site.url);
    expect((await again.signIn('vic', code)).status, 'a code used once').toBe(401);
    expect((await anyone.post('/logout', { _csrf: anyone.token })).status).toBe(303);
    expect((await anyone.request('/')).status).toBe(303);
  });

  it('a request without the CSRF token, with another browser\'s, or from a role that may not, is refused', { timeout: 60_000 }, async () => {
    const vic = new Visitor(site.url);
    expect((await vic.signIn('vic', await site.code('vic'))).status).toBe(303);
    await vic.request('/attention');
    const viewerCancel = await vic.post('/attention/cancel', { _csrf: vic.token, batch: 'B1', line: '2', confirm: 'yes' });
    expect(viewerCancel.status).toBe(403);
    expect(viewerCancel.text).toContain('vic (viewer) may not cancel');
    expect((await vic.post('/approvals/B1/approve', { _csrf: vic.token, statement: '{}', signature: 'x' })).status).toBe(403);
    expect((await vic.post('/approvals/B1/reject', { _csrf: vic.token, reason: 'no' })).status).toBe(403);

    const olga = new Visitor(site.url);
    expect((await olga.signIn('olga', await site.code('olga'))).status).toBe(303);
    await olga.request('/attention');
    expect((await olga.post('/attention/cancel', { batch: 'B1', line: '2', confirm: 'yes' })).status, 'no token').toBe(403);
    expect((await olga.post('/attention/cancel', { _csrf: vic.token, batch: 'B1', line: '2', confirm: 'yes' })).status, 'another browser\'s token').toBe(403);
    const operatorApproves = await olga.post('/approvals/B1/approve', { _csrf: olga.token, statement: '{}', signature: 'x' });
    expect(operatorApproves.status).toBe(403);
    expect(operatorApproves.text).toContain('olga (operator) may not approve');
    // Odd input is refused, never a crash: a repeated field, a JSON body, an unknown stream.
    expect((await olga.request('/live?what=a&what=b')).status).toBe(404);
    expect((await olga.request('/approvals/B1?ceiling_USD=1&ceiling_USD=2')).status).toBe(404);
    const json = await fetch(`${site.url}/attention/cancel`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: [...olga.cookies.entries()].map(([k, v]) => `${k}=${v}`).join('; ') }, body: '{"batch":1}' });
    expect(json.status).toBe(415);
    // Her own token passes the CSRF check: the row is simply not one that needs attention.
    expect((await olga.post('/attention/cancel', { _csrf: olga.token, batch: 'B1', line: '2', confirm: 'yes' })).status).toBe(404);
  });

  it('paybatch console is read-only: an operator cannot cancel there', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [BIN, 'console', '--home', site.home, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect.poll(() => /read-only\) at (http:\S+);/.exec(stderr)?.[1] ?? '', { timeout: 20_000 }).toMatch(/^http/);
      const url = (/read-only\) at (http:\S+);/.exec(stderr) as RegExpExecArray)[1] as string;
      const olga = new Visitor(url);
      expect((await olga.signIn('olga', await site.code('olga'))).status).toBe(303);
      const page = await olga.request('/attention');
      expect(page.text).toContain('read-only console');
      const refused = await olga.post('/attention/cancel', { _csrf: olga.token, batch: 'B1', line: '2', confirm: 'yes' });
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('this console is read-only');
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
  });

  it('sign-in attempts are limited: guessing codes is cut off', { timeout: 60_000 }, async () => {
    const guesser = new Visitor(site.url);
    await guesser.request('/login');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) statuses.push((await guesser.post('/login', { _csrf: guesser.token, name: 'ada', code: `GUESS-${String(i).padStart(5, '0')}` })).status);
    expect(statuses).toContain(429);
    expect(statuses.slice(0, statuses.indexOf(429)).every((s) => s === 401)).toBe(true);
  });

  it('a CSRF token passes only with the session it was made for: not one from the sign-in page, nor another person\'s, nor an earlier session\'s', { timeout: 60_000 }, async () => {
    const olga = new Visitor(site.url);
    expect((await olga.signIn('olga', await site.code('olga'))).status).toBe(303);
    await olga.request('/attention');
    const session = olga.cookies.get('paybatch_session') as string;
    // Cookies are sent by hand: SameSite plays no part, as with cookies planted from a sibling site.
    const forged = async (from: Visitor, token: string): Promise<number> => {
      const cookies = new Map(from.cookies);
      cookies.set('paybatch_session', session);
      const response = await fetch(`${site.url}/attention/cancel`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: [...cookies.entries()].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: token, batch: 'B1', line: '2', confirm: 'yes' }).toString(),
      });
      await response.text();
      return response.status;
    };
    const anonymous = new Visitor(site.url);
    await anonymous.request('/login');
    expect(anonymous.token).not.toBe('');
    expect(await forged(anonymous, anonymous.token), 'the sign-in page\'s cookie and token').toBe(403);
    const vic = new Visitor(site.url);
    expect((await vic.signIn('vic', await site.code('vic'))).status).toBe(303);
    await vic.request('/attention');
    expect(await forged(vic, vic.token), 'another person\'s session\'s cookies and token').toBe(403);
    // Her own token passes the CSRF check: the row is simply not one that needs attention.
    expect(await forged(olga, olga.token), 'her own').toBe(404);

    // Signing in again in the same browser makes a new session, with a new token; the old one no longer passes.
    const first = olga.token;
    expect((await olga.signIn('olga', await site.code('olga'))).status).toBe(303);
    expect(olga.cookies.get('paybatch_session')).not.toBe(session);
    await olga.request('/attention');
    expect(olga.token).not.toBe(first);
    expect((await olga.post('/attention/cancel', { _csrf: first, batch: 'B1', line: '2', confirm: 'yes' })).status, 'the earlier session\'s token').toBe(403);
    expect((await olga.post('/attention/cancel', { _csrf: olga.token, batch: 'B1', line: '2', confirm: 'yes' })).status).toBe(404);
  });

  it('without console.trust_proxy, X-Forwarded-For is not believed: every address it names is the connection\'s', { timeout: 60_000 }, async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const guesser = new Visitor(site.url, { 'x-forwarded-for': `10.9.0.${i + 1}` });
      await guesser.request('/login');
      statuses.push((await guesser.post('/login', { _csrf: guesser.token, name: 'inbox', code: `GUESS-${String(i).padStart(5, '0')}` })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const elsewhere = new Visitor(site.url, { 'x-forwarded-for': '10.9.1.1' });
    expect((await elsewhere.signIn('inbox', await site.code('inbox'))).status, 'another X-Forwarded-For, the same connection: still limited').toBe(429);
    // The limit is inbox's at this address: another person signs in from it.
    expect((await new Visitor(site.url, { 'x-forwarded-for': '10.9.0.1' }).signIn('vic', await site.code('vic'))).status).toBe(303);
  });

  it('one session holds at most console.live_streams_per_session (4) live streams; another session still gets one', { timeout: 60_000 }, async () => {
    const signedIn = async (name: string): Promise<string> => {
      const visitor = new Visitor(site.url);
      expect((await visitor.signIn(name, await site.code(name))).status).toBe(303);
      return visitor.cookieHeader();
    };
    const olga = await signedIn('olga');
    const vic = await signedIn('vic');
    const opened: AbortController[] = [];
    /** Opens a stream; when it is let in, reads until its first event and keeps it open. */
    const open = async (cookie: string): Promise<number> => {
      const abort = new AbortController();
      const response = await fetch(`${site.url}/live?what=batches`, { headers: { cookie }, signal: abort.signal });
      if (response.status !== 200) {
        await response.text();
        return response.status;
      }
      opened.push(abort);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      while (!text.includes('event: ready')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('utf8');
      }
      return response.status;
    };
    try {
      for (let i = 0; i < 4; i += 1) expect(await open(olga), `olga's stream ${i + 1}`).toBe(200);
      expect(await open(olga), 'a fifth stream of the same session').toBe(429);
      expect(await open(vic), 'another session').toBe(200);
      // Closing one gives its slot back.
      opened[0]?.abort();
      await expect.poll(() => open(olga), { timeout: 10_000, interval: 100 }).toBe(200);
    } finally {
      for (const abort of opened) abort.abort();
    }
  });
});
