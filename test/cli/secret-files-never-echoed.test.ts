/**
 * No secret, not even part of one, in any message, whatever file is given
 * where: a secret file given as the configuration, as a batch, or read as the
 * API secret; a base URL carrying a password.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const SECRET = 'sk_live_Zx9Qp7Lm3Rt8Vw2Ya6Bc';
/** Any eight characters of the secret in a row. */
const pieces = Array.from({ length: SECRET.length - 7 }, (_, i) => SECRET.slice(i, i + 8));
const leaks = (text: string): string[] => pieces.filter((piece) => text.includes(piece));

describe('a secret file given where it does not belong', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-secret-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it.each([
    ['the configuration, not JSON', () => ['run', '--config', file('a.txt', `${SECRET}\n`), '--home', join(dir, 'ws')]],
    ['the configuration, JSON of the wrong shape', () => ['run', '--config', file('b.json', JSON.stringify(SECRET)), '--home', join(dir, 'ws')]],
    ['the configuration, JSON broken after the secret', () => ['run', '--config', file('c.json', `{"service": {"api_secret": "${SECRET}", }`), '--home', join(dir, 'ws')]],
    ['a batch file', () => ['validate', file('d.csv', `${SECRET}\n`)]],
    ['a batch file whose header is the secret', () => ['validate', file('e.csv', `${SECRET},type\nx,bank\n`)]],
    ['a batch file, with the secret as configuration too', () => ['validate', file('f.csv', `${SECRET}\n`), '--config', join(dir, 'a.txt')]],
  ])('%s: no part of the secret in what is printed', async (_what, args) => {
    const result = await runCli(args());
    expect(result.code).not.toBe(0);
    expect(leaks(result.stdout + result.stderr)).toEqual([]);
    expect(result.stderr).not.toMatch(/a bug, please report it/);
  });

  it('a base URL carrying a password is shown without it', async () => {
    const env = { PAYBATCH_HOME: join(dir, 'ws2'), PAYBATCH_BASE_URL: `http://payouts:${SECRET}@127.0.0.1:9/v1`, PAYBATCH_API_KEY: 'k', PAYBATCH_API_SECRET: 's3cret-s3cret' };
    const result = await runCli(['run', '--wait', '1s'], { env });
    expect(leaks(result.stdout + result.stderr)).toEqual([]);
    expect(result.stderr).toMatch(/its user name and password not shown/);
  });
});
