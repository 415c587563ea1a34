import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';

describe('injected faults', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await testSandbox();
  });
  afterAll(() => sandbox.stop());
  beforeEach(async () => {
    await operator(sandbox, 'DELETE', '/faults');
  });

  it('answers 500 and 503 at the configured rates without processing the request', async () => {
    await operator(sandbox, 'PUT', '/faults', { http_500_rate: 1 });
    const body = createBody('gbr');
    const refused = await call(sandbox, 'POST', '/transactions', body);
    expect(refused.status).toBe(500);
    expect(refused.body.errors).toEqual(['service trouble (injected fault)']);
    await operator(sandbox, 'PUT', '/faults', { http_500_rate: 0, http_503_rate: 1 });
    expect((await call(sandbox, 'GET', '/corridors/GBR')).status).toBe(503);
    expect((await operator(sandbox, 'GET', '/balances')).status).toBe(200);
    await operator(sandbox, 'DELETE', '/faults');
    expect((await call(sandbox, 'GET', `/transactions?external_id=${String(body.external_id)}`)).body).toEqual([]);
  });

  it('answers 429 with Retry-After', async () => {
    await operator(sandbox, 'PUT', '/faults', { http_429_rate: 1, retry_after_s: 7 });
    const answer = await call(sandbox, 'GET', '/corridors/GBR');
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('7');
  });

  it('adds latency from the configured range', async () => {
    await operator(sandbox, 'PUT', '/faults', { latency: { rate: 1, min_ms: 120, max_ms: 150 } });
    const started = performance.now();
    expect((await call(sandbox, 'GET', '/corridors/GBR')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });

  /**
   * A create sent under 600 ms of latency (and `faults`): whether the operator's routes (no latency) list it before
   * its answer comes, when that was, its answer's status, when it came, and whether they list it then.
   */
  async function createUnderLatency(faults: object = {}): Promise<{ firstLookMs: number; listedAtMs: number | null; status: number; answeredAtMs: number; listedAfter: boolean }> {
    await operator(sandbox, 'PUT', '/faults', { latency: { rate: 1, min_ms: 600, max_ms: 600 }, ...faults });
    const body = createBody('gbr');
    const listed = async (): Promise<boolean> => ((await operator(sandbox, 'GET', '/transactions')).body as { external_id: string }[]).some((tx) => tx.external_id === body.external_id);
    const started = performance.now();
    let answered = false;
    const answer = call(sandbox, 'POST', '/transactions', body).finally(() => (answered = true));
    // Looked at again and again (no fixed wait) until it is listed or its answer has come: when it was first
    // looked at, and when (if ever, before its answer) it was listed.
    let firstLookMs: number | null = null;
    let listedAtMs: number | null = null;
    while (!answered && listedAtMs === null) {
      const now = await listed();
      const at = performance.now() - started;
      firstLookMs ??= at;
      if (now && !answered) listedAtMs = at;
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const { status } = await answer;
    const answeredAtMs = performance.now() - started;
    return { firstLookMs: firstLookMs ?? Infinity, listedAtMs, status, answeredAtMs, listedAfter: await listed() };
  }

  it('does the work as the request arrives, and answers when the latency has passed', async () => {
    const seen = await createUnderLatency();
    // Well inside the latency, the transaction exists already.
    expect(seen.listedAtMs).not.toBeNull();
    expect(seen.listedAtMs).toBeLessThan(550);
    expect(seen.status).toBe(201);
    expect(seen.answeredAtMs).toBeGreaterThanOrEqual(595);
  });

  it('answers its own internal error no sooner than the latency either', async () => {
    await operator(sandbox, 'PUT', '/faults', { latency: { rate: 1, min_ms: 300, max_ms: 300 } });
    const service = sandbox.service as unknown as { getTransaction: (id: string) => unknown };
    const original = service.getTransaction;
    service.getTransaction = () => {
      throw new Error('a bug in the sandbox');
    };
    try {
      const started = performance.now();
      const answer = await call(sandbox, 'GET', '/transactions/tr_any');
      expect(answer.status).toBe(500);
      expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    } finally {
      service.getTransaction = original;
    }
  });

  it('with late_commit_rate, a request takes effect only once its latency has passed', async () => {
    const seen = await createUnderLatency({ late_commit_rate: 1 });
    // Looked at well inside the latency, and at every look until its answer, not there.
    expect(seen.firstLookMs).toBeLessThan(550);
    expect(seen.listedAtMs).toBeNull();
    expect(seen.status).toBe(201);
    expect(seen.listedAfter).toBe(true);
  });

  it('draws a fraction of requests, not all or none, at a fractional rate', async () => {
    await operator(sandbox, 'PUT', '/faults', { http_503_rate: 0.5 });
    const statuses = [];
    for (let i = 0; i < 60; i++) statuses.push((await call(sandbox, 'GET', '/corridors/GBR')).status);
    const refused = statuses.filter((s) => s === 503).length;
    expect(refused).toBeGreaterThan(10);
    expect(refused).toBeLessThan(50);
  });

  it('resets the connection after a create took effect: the transaction exists', async () => {
    await operator(sandbox, 'PUT', '/faults', { reset_after_commit: { create: 1 } });
    const body = createBody('gbr');
    await expect(call(sandbox, 'POST', '/transactions', body)).rejects.toThrow();
    await operator(sandbox, 'DELETE', '/faults');
    const found = await call(sandbox, 'GET', `/transactions?external_id=${String(body.external_id)}`);
    expect(found.body).toHaveLength(1);
    const again = await call(sandbox, 'POST', '/transactions', body);
    expect(again.status).toBe(422);
    expect(again.body.meta.existing.transaction.id).toBe(found.body[0].id);
  });

  it('resets the connection after a fund took effect: debited once, and a second fund is refused', async () => {
    const tx = (await call(sandbox, 'POST', '/transactions', createBody('gbr'))).body;
    await operator(sandbox, 'PUT', '/faults', { reset_after_commit: { fund: 1 } });
    await expect(call(sandbox, 'POST', `/transactions/${tx.id}/fund`)).rejects.toThrow();
    await operator(sandbox, 'DELETE', '/faults');
    expect((await call(sandbox, 'GET', `/transactions/${tx.id}`)).body.state).toBe('pending');
    expect((await call(sandbox, 'POST', `/transactions/${tx.id}/fund`)).status).toBe(422);
    const debits = (await operator(sandbox, 'GET', '/ledger')).body.filter((e: { transaction_id: string }) => e.transaction_id === tx.id);
    expect(debits).toHaveLength(1);
    expect(sandbox.logs.some((l) => /fund took effect; connection reset/.test(l))).toBe(true);
  });

  it('refuses a fault profile that is not valid, naming the key', async () => {
    const answer = await operator(sandbox, 'PUT', '/faults', { http_500_rate: 3 });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.faults[0]).toMatch(/http_500_rate/);
  });
});
