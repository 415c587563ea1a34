/**
 * The sign-in limits over real HTTP, behind a proxy (console.trust_proxy on, a
 * real `paybatch watch`): each client is the address its X-Forwarded-For ends
 * with. Wrong codes for one person do not lock out another at the same
 * address, nor that person elsewhere; one address, and one person from many
 * addresses, are each limited too; a form refused for its token is not counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleSite } from '../helpers/console-site.js';
import { startConsoleSite } from '../helpers/console-site.js';
import { Visitor } from '../helpers/console-visitor.js';

const PEOPLE = ['amy', 'ben', 'cat', 'dan', 'eve'] as const;

describe('sign-in limits, per person and per address, behind a proxy', () => {
  let site: ConsoleSite;
  beforeAll(async () => {
    site = await startConsoleSite({ console: { trust_proxy: true, people: Object.fromEntries(PEOPLE.map((p) => [p, { role: 'viewer' }])) } });
  }, 60_000);
  afterAll(async () => site?.stop());

  /** A browser behind the proxy, at `address`. */
  const at = (address: string): Visitor => new Visitor(site.url, { 'x-forwarded-for': address });

  /** `count` wrong codes for `name` from `address`: their statuses. */
  async function wrongCodes(address: string, name: string, count: number): Promise<number[]> {
    const guesser = at(address);
    await guesser.request('/login');
    const statuses: number[] = [];
    for (let i = 0; i < count; i += 1) statuses.push((await guesser.post('/login', { _csrf: guesser.token, name, code: `WRONG-${String(i).padStart(5, '0')}` })).status);
    return statuses;
  }

  it('wrong codes for one person from an address do not lock out another person there', { timeout: 60_000 }, async () => {
    expect(await wrongCodes('10.0.1.1', 'amy', 5)).toEqual([401, 401, 401, 401, 401]);
    const amy = at('10.0.1.1');
    const limited = await amy.signIn('amy', await site.code('amy'));
    expect(limited.status, 'amy, a sixth try from there, even with her right code').toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    expect((await at('10.0.1.1').signIn('ben', await site.code('ben'))).status, 'ben, from the same address').toBe(303);
  });

  it('someone else\'s wrong codes for a person elsewhere leave that person signing in; two clients behind the proxy count apart', { timeout: 60_000 }, async () => {
    expect(await wrongCodes('10.0.2.1', 'ben', 6)).toEqual([401, 401, 401, 401, 401, 429]);
    const code = await site.code('ben');
    // The proxy's last entry is the client: what a client writes before it does not move it to a fresh bucket.
    expect((await at('10.0.9.9, 10.0.2.1').signIn('ben', code)).status, 'the guesser, claiming another address first').toBe(429);
    expect((await at('10.0.2.2').signIn('ben', code)).status, 'ben himself, from his own address').toBe(303);
  });

  it('a person is limited however many addresses guess their code', { timeout: 60_000 }, async () => {
    for (let a = 1; a <= 6; a += 1) expect(await wrongCodes(`10.0.3.${a}`, 'cat', 5), `address ${a}`).toEqual([401, 401, 401, 401, 401]);
    const code = await site.code('cat');
    expect((await at('10.0.3.100').signIn('cat', code)).status, 'cat, after 30 wrong codes from six addresses').toBe(429);
    // Those addresses are not locked for others: each typed only five wrong codes.
    expect((await at('10.0.3.1').signIn('dan', await site.code('dan'))).status).toBe(303);
  });

  it('an address is limited whatever names it types', { timeout: 60_000 }, async () => {
    const guesser = at('10.0.4.1');
    await guesser.request('/login');
    const statuses: number[] = [];
    for (let i = 0; i < 20; i += 1) statuses.push((await guesser.post('/login', { _csrf: guesser.token, name: `nobody-${i}`, code: 'WRONG-WRONG' })).status);
    expect(statuses.every((s) => s === 401)).toBe(true);
    const code = await site.code('eve');
    expect((await at('10.0.4.1').signIn('eve', code)).status, 'eve, from the address that guessed').toBe(429);
    expect((await at('10.0.4.2').signIn('eve', code)).status, 'eve, from another').toBe(303);
  });

  it('a form refused for its token is not counted as a wrong code', { timeout: 60_000 }, async () => {
    const visitor = at('10.0.5.1');
    await visitor.request('/login');
    for (let i = 0; i < 10; i += 1) expect((await visitor.post('/login', { _csrf: 'not-the-token', name: 'amy', code: 'WRONG-WRONG' })).status).toBe(403);
    expect((await visitor.signIn('amy', await site.code('amy'))).status).toBe(303);
  });
});
