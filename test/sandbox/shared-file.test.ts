/**
 * One sandbox file opened by several processes at once (every command of a
 * workspace on its embedded sandbox): each sees the others' changes, caches
 * included, and writes take turns instead of failing. The second process is a
 * real one, of the built `dist/` (needs `npm run build`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SandboxStore } from '../../src/sandbox/store.js';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';

const BUILT_STORE = fileURLToPath(new URL('../../dist/src/sandbox/store.js', import.meta.url));

/** In another process: `moves` debits of 1 USD cent, each read then written in one transaction, as funding is. */
const DEBITS = `
const { SandboxStore } = await import(process.argv[1]);
const store = new SandboxStore(process.argv[2]);
process.stdout.write('ready\\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
for (let i = 0; i < Number(process.argv[3]); i++) store.atomic(() => store.moveBalance(i, 'debit', 'USD', -1n, null));
store.close();
`;

describe('a sandbox file shared by several processes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-sandbox-shared-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('each sandbox sees what the other did: transactions, time moved, corridors switched, webhooks registered', async () => {
    const file = join(dir, 'both.db');
    const [a, b] = await Promise.all([testSandbox({}, file), testSandbox({}, file)]);
    try {
      // Seeded once, by whichever made the file.
      expect((await operator(a, 'GET', '/ledger')).body.filter((e: { kind: string }) => e.kind === 'adjustment')).toHaveLength(3);
      const tx = (await call(a, 'POST', '/transactions', createBody('gbr'))).body;
      expect((await call(b, 'POST', `/transactions/${tx.id}/fund`)).status).toBe(200);
      expect((await call(a, 'GET', `/transactions/${tx.id}`)).body.state).toBe('pending');
      // Read once by each, so that each holds the clock offset and the corridors in its cache.
      const before = (await operator(a, 'GET', '/time')).body;
      expect((await call(a, 'GET', '/corridors/GBR')).body.find((c: { id: string }) => c.id === 'gbr-bank').active).toBe(true);
      expect(a.store.webhookForEvent('transaction.paid')).toBeUndefined();
      b.advance(3_600_000);
      await operator(b, 'PUT', '/corridors/gbr-bank', { active: false });
      await call(b, 'POST', '/webhooks', { event_type: 'transaction.paid', uri: 'http://127.0.0.1:9/x' });
      const after = (await operator(a, 'GET', '/time')).body;
      expect(after.now_ms - before.now_ms).toBe(3_600_000);
      expect((await call(a, 'GET', `/transactions/${tx.id}`)).body.state).toBe('paid');
      expect((await call(a, 'GET', '/corridors/GBR')).body.find((c: { id: string }) => c.id === 'gbr-bank').active).toBe(false);
      expect(a.store.webhookForEvent('transaction.paid')?.uri).toBe('http://127.0.0.1:9/x');
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('writes of two processes at once take turns: none refused, every debit counted once', async () => {
    const file = join(dir, 'busy.db');
    const here = new SandboxStore(file);
    here.atomic(() => here.moveBalance(0, 'adjustment', 'USD', 100_000n, null));
    const moves = 3_000;
    const child = spawn(process.execPath, ['--input-type=module', '-e', DEBITS, BUILT_STORE, file, String(moves)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      void exited.then(() => reject(new Error(`the other process ended before it was ready: ${stderr}`)));
    });
    child.stdin.end('go\n');
    // Until the other process has ended, and at least `moves` times: both read, then write, at once.
    let mine = 0;
    let ended = false;
    void exited.then(() => (ended = true));
    while (!ended || mine < moves) {
      here.atomic(() => here.moveBalance(1, 'debit', 'USD', -1n, null));
      mine += 1;
      if (mine % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await exited, stderr).toBe(0);
    expect(here.balance('USD')).toBe(100_000n - BigInt(moves + mine));
    expect(here.ledger(0, 100_000).filter((e) => e.kind === 'debit')).toHaveLength(moves + mine);
    here.close();
  });
});
