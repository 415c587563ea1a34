/**
 * A name with a control character never reaches the console's sign-in (nor,
 * through it, the audit trail or the log): refused with 400 and why, over real
 * HTTP against a real `paybatch console`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { BIN } from '../helpers/cli.js';

describe('the console\'s sign-in and names', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-console-names-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a name with a control character with 400, and an unknown ordinary name as before (401)', { timeout: 60_000 }, async () => {
    const home = join(dir, 'ws');
    mkdirSync(home);
    await SqliteStore.open(join(home, 'paybatch.db')).close();
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ console: { people: { vic: { role: 'viewer' } } } }));
    const child = spawn(process.execPath, [BIN, 'console', '--home', home, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stderr = '';
        const timer = setTimeout(() => reject(new Error(`no console within 30 s:\n${stderr}`)), 30_000);
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          const found = /console \(read-only\) at (http:\/\/\S+);/.exec(stderr);
          if (found) {
            clearTimeout(timer);
            resolve(found[1] as string);
          }
        });
      });
      const page = await fetch(`${url}/login`);
      const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
      const signIn = (name: string) => fetch(`${url}/login`, {
        method: 'POST', redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: token, name, code: 'AAAAA-AAAAA' }).toString(),
      });
      const refused = await signIn('vic\nada');
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('That name cannot be signed in: a name cannot contain control characters (U+000A at character 4).');
      expect((await signIn('nobody')).status).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
