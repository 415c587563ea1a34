import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputAmountFor } from '../../src/sandbox/money.js';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';

describe('exchange and rounding [D9]', () => {
  it('divides by the rate and rounds up to the input minor unit', () => {
    expect(inputAmountFor(79120n, 2, 2, '0.7912')).toBe(100000n);
    expect(inputAmountFor(1n, 2, 2, '0.7912')).toBe(2n); // 1.2639 cents
    expect(inputAmountFor(154550n, 2, 2, '1545.50')).toBe(100n);
    expect(inputAmountFor(154551n, 2, 2, '1545.50')).toBe(101n);
    expect(inputAmountFor(1000n, 0, 2, '150')).toBe(667n); // 1000 JPY, 0 decimals
    expect(inputAmountFor(1000n, 3, 2, '0.307')).toBe(326n); // 1.000 KWD, 3 decimals
    expect(inputAmountFor(123456789012345678n, 2, 2, '1')).toBe(123456789012345678n);
  });
});

describe('sandbox money: funding, balances and the ledger [D10], [D11]', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await testSandbox({ balances: { USD: '1000000', EUR: '500000' } });
  });
  afterAll(() => sandbox.stop());

  const balance = async (currency: string): Promise<bigint> => BigInt((await operator(sandbox, 'GET', '/balances')).body[currency]);
  const create = async (...args: Parameters<typeof createBody>) => (await call(sandbox, 'POST', '/transactions', createBody(...args))).body;

  it('debits exactly the input amount once, and refuses a second funding', async () => {
    const tx = await create('gbr', { output_amount_in_cents: '79120' });
    const before = await balance('USD');
    const funded = await call(sandbox, 'POST', `/transactions/${tx.id}/fund`, { input_amount_in_cents: '100000', input_currency: 'USD' });
    expect(funded.status).toBe(200);
    expect(funded.body.state).toBe('pending');
    expect(funded.body.funded_at).not.toBeNull();
    expect(await balance('USD')).toBe(before - 100000n);
    const again = await call(sandbox, 'POST', `/transactions/${tx.id}/fund`);
    expect(again.status).toBe(422);
    expect(again.body.errors.state).toEqual(['the transaction is already funded']);
    expect(await balance('USD')).toBe(before - 100000n);
    const debits = (await operator(sandbox, 'GET', '/ledger')).body.filter((e: { transaction_id: string }) => e.transaction_id === tx.id);
    expect(debits).toEqual([expect.objectContaining({ kind: 'debit', currency: 'USD', amount: '100000', balance_after: String(before - 100000n) })]);
  });

  it('refuses a guard that does not match the computed amount, debiting nothing', async () => {
    const tx = await create('gbr', { output_amount_in_cents: '79120' });
    const before = await balance('USD');
    const wrongAmount = await call(sandbox, 'POST', `/transactions/${tx.id}/fund`, { input_amount_in_cents: '99999', input_currency: 'USD' });
    expect(wrongAmount.status).toBe(422);
    expect(wrongAmount.body.errors.input_amount_in_cents[0]).toMatch(/does not match .* 100000/);
    const wrongCurrency = await call(sandbox, 'POST', `/transactions/${tx.id}/fund`, { input_amount_in_cents: '100000', input_currency: 'EUR' });
    expect(wrongCurrency.body.errors.input_currency).toBeDefined();
    expect(await balance('USD')).toBe(before);
    expect((await call(sandbox, 'GET', `/transactions/${tx.id}`)).body.state).toBe('approved');
  });

  it('refuses funding beyond the balance with an error on balance, debiting nothing', async () => {
    await operator(sandbox, 'PUT', '/balances', { USD: '50000' });
    const tx = await create('global', { output_amount_in_cents: '50001' });
    const refused = await call(sandbox, 'POST', `/transactions/${tx.id}/fund`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors.balance).toEqual(['insufficient USD balance: 50000 available, 50001 needed']);
    expect(await balance('USD')).toBe(50000n);
    const exact = await create('global', { output_amount_in_cents: '50000' });
    expect((await call(sandbox, 'POST', `/transactions/${exact.id}/fund`)).status).toBe(200);
    expect(await balance('USD')).toBe(0n);
    await operator(sandbox, 'PUT', '/balances', { USD: '1000000' });
  });

  it('cancels a funded transaction to refunded, restoring the balance to the cent', async () => {
    const tx = await create('deu', { output_amount_in_cents: '123457' });
    const before = await balance('EUR');
    await call(sandbox, 'POST', `/transactions/${tx.id}/fund`);
    expect(await balance('EUR')).toBe(before - 123457n);
    const cancel = await call(sandbox, 'DELETE', `/transactions/${tx.id}`);
    expect(cancel.status).toBe(202);
    expect(cancel.body.state).toBe('pending');
    expect((await call(sandbox, 'POST', `/transactions/${tx.id}/fund`)).status).toBe(422);
    sandbox.advance(sandbox.config.payout.cancel_ms);
    const canceled = (await call(sandbox, 'GET', `/transactions/${tx.id}`)).body;
    expect(canceled.state).toBe('canceled');
    expect(canceled.may_cancel).toBe(false);
    sandbox.advance(sandbox.config.payout.refund_ms);
    const refunded = (await call(sandbox, 'GET', `/transactions/${tx.id}`)).body;
    expect(refunded).toMatchObject({ state: 'refunded', refunded_amount_in_cents: '123457', state_reason_details: { code: 'cancelled_by_client' } });
    expect(await balance('EUR')).toBe(before);
    const entries = (await operator(sandbox, 'GET', '/ledger')).body.filter((e: { transaction_id: string }) => e.transaction_id === tx.id);
    expect(entries.map((e: { kind: string; amount: string }) => `${e.kind} ${e.amount}`)).toEqual(['debit 123457', 'credit 123457']);
  });

  it('cancels an unfunded transaction without touching the balance, and refuses to cancel a paid one', async () => {
    const tx = await create('gbr');
    const before = await balance('USD');
    expect((await call(sandbox, 'DELETE', `/transactions/${tx.id}`)).status).toBe(202);
    sandbox.advance(sandbox.config.payout.cancel_ms + sandbox.config.payout.refund_ms);
    expect((await call(sandbox, 'GET', `/transactions/${tx.id}`)).body.state).toBe('canceled');
    expect(await balance('USD')).toBe(before);
    const paid = await create('gbr');
    await call(sandbox, 'POST', `/transactions/${paid.id}/fund`);
    sandbox.advance(sandbox.config.payout.clearing_ms + sandbox.config.payout.delay_ms[1]);
    expect((await call(sandbox, 'GET', `/transactions/${paid.id}`)).body.state).toBe('paid');
    const late = await call(sandbox, 'DELETE', `/transactions/${paid.id}`);
    expect(late.status).toBe(422);
    expect(late.body.errors.state).toEqual(['a transaction in state paid cannot be cancelled']);
  });

  it('keeps a ledger whose entries alone sum to the current balances', async () => {
    const ledger = (await operator(sandbox, 'GET', '/ledger')).body as { kind: string; currency: string; amount: string; balance_after: string }[];
    const running: Record<string, bigint> = {};
    for (const entry of ledger) {
      const delta = entry.kind === 'debit' ? -BigInt(entry.amount) : BigInt(entry.amount);
      running[entry.currency] = (running[entry.currency] ?? 0n) + delta;
      expect(running[entry.currency]).toBe(BigInt(entry.balance_after));
    }
    const balances = (await operator(sandbox, 'GET', '/balances')).body;
    for (const [currency, amount] of Object.entries(running)) expect(BigInt(balances[currency])).toBe(amount);
    expect(ledger.some((e) => e.kind === 'adjustment' && e.amount.startsWith('-'))).toBe(true);
  });
});
