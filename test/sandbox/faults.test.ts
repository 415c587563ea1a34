import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import type { Answer, TestSandbox } from '../helpers/sandbox.js';
import { gate, turns } from '../helpers/gates.js';
import { createBody } from '../helpers/requests.js';

/** A call's answer, and whether it has come, looked at once every request the sandbox received before has been worked. */
function answering(sent: Promise<Answer>): { done: Promise<Answer>; before: () => Promise<boolean> } {
  let answered = false;
  const done = sent.finally(() => (answered = true));
  return { done, before: async () => { await turns(20); return answered; } };
}

describe('injected faults', () => {
  let sandbox: TestSandbox;
  /** The latencies the sandbox was asked to wait out, each held until the test lets it pass (no timer: no fixed wait). */
  let latencies: { ms: number; pass: () => void }[] = [];
  let asked = gate();
  beforeAll(async () => {
    sandbox = await testSandbox({}, undefined, (ms) => new Promise<void>((resolve) => {
      latencies.push({ ms, pass: resolve });
      asked.open();
    }));
  });
  afterAll(() => sandbox.stop());
  beforeEach(async () => {
    await operator(sandbox, 'DELETE', '/faults');
    latencies = [];
    asked = gate();
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
    const answer = answering(call(sandbox, 'GET', '/corridors/GBR'));
    await asked.opened;
    expect(latencies.map((l) => l.ms)).toEqual([expect.any(Number)]);
    expect(latencies[0]?.ms).toBeGreaterThanOrEqual(120);
    expect(latencies[0]?.ms).toBeLessThanOrEqual(150);
    // Held: no answer before the latency has passed.
    expect(await answer.before()).toBe(false);
    latencies[0]?.pass();
    expect((await answer.done).status).toBe(200);
  });

  /**
   * A create sent under 600 ms of latency (and `faults`), the latency held: whether the operator's routes (no latency)
   * list it and whether its answer came while the latency is held, then its answer's status once it has passed, and
   * whether they list it then.
   */
  async function createUnderLatency(faults: object = {}): Promise<{ ms: number | undefined; listedBefore: boolean; answeredBefore: boolean; status: number; listedAfter: boolean }> {
    await operator(sandbox, 'PUT', '/faults', { latency: { rate: 1, min_ms: 600, max_ms: 600 }, ...faults });
    const body = createBody('gbr');
    const listed = async (): Promise<boolean> => ((await operator(sandbox, 'GET', '/transactions')).body as { external_id: string }[]).some((tx) => tx.external_id === body.external_id);
    const answer = answering(call(sandbox, 'POST', '/transactions', body));
    await asked.opened;
    const listedBefore = await listed();
    const answeredBefore = await answer.before();
    latencies[0]?.pass();
    const { status } = await answer.done;
    return { ms: latencies[0]?.ms, listedBefore, answeredBefore, status, listedAfter: await listed() };
  }

  it('does the work as the request arrives, and answers when the latency has passed', async () => {
    const seen = await createUnderLatency();
    // While the latency is held, the transaction exists already, and nothing is answered.
    expect(seen.ms).toBe(600);
    expect(seen.listedBefore).toBe(true);
    expect(seen.answeredBefore).toBe(false);
    expect(seen.status).toBe(201);
  });

  it('answers its own internal error no sooner than the latency either', async () => {
    await operator(sandbox, 'PUT', '/faults', { latency: { rate: 1, min_ms: 300, max_ms: 300 } });
    const service = sandbox.service as unknown as { getTransaction: (id: string) => unknown };
    const original = service.getTransaction;
    let failed = false;
    service.getTransaction = () => {
      failed = true;
      throw new Error('a bug in the sandbox');
    };
    try {
      const answer = answering(call(sandbox, 'GET', '/transactions/tr_any'));
      await asked.opened;
      expect(latencies[0]?.ms).toBe(300);
      // The request was worked (and failed) while the latency is held; its 500 waits for the latency.
      expect(await answer.before()).toBe(false);
      expect(failed).toBe(true);
      latencies[0]?.pass();
      expect((await answer.done).status).toBe(500);
    } finally {
      service.getTransaction = original;
    }
  });

  it('with late_commit_rate, a request takes effect only once its latency has passed', async () => {
    const seen = await createUnderLatency({ late_commit_rate: 1 });
    // Looked at while the latency is held: not there, not answered.
    expect(seen.listedBefore).toBe(false);
    expect(seen.answeredBefore).toBe(false);
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
