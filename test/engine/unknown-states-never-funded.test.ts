/**
 * A service that answers oddly must not make paybatch pay wrongly or stop: a
 * transaction in a state the interface does not name, answers too large or not
 * JSON, and a redirect elsewhere (the client's own tests cover each answer; this
 * one takes a whole batch through the engine against such a service).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/api/client.js';
import { configSchema } from '../../src/config/config.js';
import { runOnce } from '../../src/engine/run.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { FAST_ENGINE, FAST_INTAKE, endingRun, template } from '../helpers/engine.js';

describe('the engine against a hostile service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-hostile-service-'));
  const calls: string[] = [];
  let url = '';
  let reads = 0;
  // The transactions this service made, by id: answers echo what was asked, so only the states are odd.
  const made = new Map<string, Record<string, unknown>>();
  const server = createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '').replace(/^\/v1/, '');
      res.setHeader('content-type', 'application/json');
      if (path.startsWith('/corridors/')) return res.end(JSON.stringify([{ id: 'gbr', country_code: 'GBR', type: 'bank', input_currency_codes: ['USD'], output_currency_codes: ['GBP'], active: true }]));
      if (req.method === 'POST' && path === '/transactions') {
        const asked = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
        const tx = {
          id: `tr_${made.size + 1}`, external_id: asked.external_id, state: 'teleported', may_cancel: false, updated_at: new Date().toISOString(),
          input_amount_in_cents: '100', input_currency: asked.input_currency_code, output_amount_in_cents: asked.output_amount_in_cents, output_currency: asked.output_currency_code,
        };
        made.set(tx.id, tx);
        return res.writeHead(201).end(JSON.stringify(tx));
      }
      if (req.method === 'GET' && path.startsWith('/transactions/')) {
        reads += 1;
        const tx = made.get(decodeURIComponent(path.slice('/transactions/'.length))) ?? {};
        // Every read answers something hostile, in turn: a huge body, not JSON, a redirect, a stranger state.
        if (reads % 4 === 1) return res.end(JSON.stringify({ ...tx, pad: 'x'.repeat(3 * 1024 * 1024) }));
        if (reads % 4 === 2) return res.end('{"id": "tr_1", ');
        if (reads % 4 === 3) return res.writeHead(302, { location: 'http://127.0.0.1:9/steal' }).end();
        return res.end(JSON.stringify({ ...tx, state: 'quantum', updated_at: new Date().toISOString() }));
      }
      res.writeHead(404).end(JSON.stringify({ errors: ['not found'] }));
    });
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('never funds a transaction in a state it does not know, keeps following it, and finishes the run', async () => {
    const workspace = openWorkspace(join(dir, 'ws'));
    const store = SqliteStore.open(workspace.database);
    const client = new PayoutClient({ baseUrl: url, credentials: { apiKey: 'k', apiSecret: 's3cret-s3cret' }, timeoutMs: 2000, retry: { baseMs: 1, capMs: 5, attempts: 2 }, maxAnswerBytes: 1024 * 1024 });
    try {
      copyFileSync(template('templates/gbr-bank.csv'), join(workspace.folders.inbox, 'gbr.csv'));
      const config = configSchema.parse({ intake: FAST_INTAKE, engine: FAST_ENGINE });
      // Its rows never end: the run is ended once it has read them again and again (five reads), 20 s the bound.
      const report = await runOnce({ workspace, store, client, config, log: () => {}, tickMs: 20, ...endingRun(() => reads > 4, 20_000) });
      const [batch] = report.batches;
      expect(batch).toMatchObject({ rows: 2, unsettled: 2 });
      expect(Object.keys(batch?.by_state ?? {}).every((s) => s === 'teleported' || s === 'quantum')).toBe(true);
      expect(calls.some((c) => c.includes('/fund'))).toBe(false);
      expect(reads).toBeGreaterThan(4);
    } finally {
      await client.close();
      await store.close();
    }
  });
});
