/**
 * A service ledger whose pages never move past where they were asked to start
 * is not read for ever: the reconciliation gives up on it with a reason (and
 * the report says the ledger was not compared). Found by an attack on the
 * reconciliation: it once asked for page after page without end.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fetchLedger } from '../../src/engine/reconcile-reads.js';

describe('a service ledger whose pages do not move on', () => {
  it('is not read for ever', async () => {
    let pages = 0;
    let reachedLimit: () => void = () => undefined;
    const limitReached = new Promise<void>((resolve) => { reachedLimit = resolve; });
    const server = createServer((_req, res) => {
      pages += 1;
      if (pages === 500) reachedLimit();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify([{ seq: 1, kind: 'debit', transaction_id: 'tx-1', currency: 'EUR', amount: '-100', at: 0 }]));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ledger`;
    const read = fetchLedger(url).then((result) => ({ result, pagesAsked: pages }));
    // Whichever comes first: fetchLedger's answer, or the 500th page asked for (bounded by an event, not a time).
    const first = await Promise.race([read.then((r) => ({ returned: true as const, ...r })), limitReached.then(() => ({ returned: false as const, pagesAsked: pages }))]);
    server.closeAllConnections();
    server.close();
    await read;
    expect(first).toMatchObject({ returned: true });
    expect(first.pagesAsked).toBeLessThanOrEqual(100);
  });
});
