import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/sandbox/webhook-registry.js';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { createBody, withOutcome } from '../helpers/requests.js';
import type { CorridorName } from '../helpers/requests.js';
import { startReceiver } from '../helpers/receiver.js';
import type { Receiver } from '../helpers/receiver.js';

const DAY = 86_400_000;

async function subscribeAll(sandbox: TestSandbox, receiver: Receiver): Promise<void> {
  for (const eventType of EVENT_TYPES) await call(sandbox, 'POST', '/webhooks', { event_type: eventType, uri: receiver.uri });
}

describe('transaction state paths [3.1], [3.2] and deterministic outcomes', () => {
  const payout = { clearing_ms: 100, quick_ms: 100, delay_ms: [1000, 4000] as [number, number], slow_delay_ms: [20000, 40000] as [number, number], error_retry_ms: 3000, cancel_ms: 200, refund_ms: 500 };
  const { clearing_ms, delay_ms, slow_delay_ms, error_retry_ms, quick_ms } = payout;
  let sandbox: TestSandbox;
  let receiver: Receiver;
  beforeAll(async () => {
    sandbox = await testSandbox({ payout });
    receiver = await startReceiver(sandbox.apiSecret);
    await subscribeAll(sandbox, receiver);
  });
  afterAll(async () => {
    await sandbox.stop();
    await receiver.stop();
  });


  async function fundedWith(corridor: CorridorName, suffix: string | null) {
    const created = await call(sandbox, 'POST', '/transactions', createBody(corridor, suffix ? withOutcome(corridor, suffix) : {}));
    expect(created.status).toBe(201);
    const funded = await call(sandbox, 'POST', `/transactions/${created.body.id}/fund`);
    expect(funded.status).toBe(200);
    return created.body.id as string;
  }
  const read = async (id: string) => (await call(sandbox, 'GET', `/transactions/${id}`)).body;

  it('pays out after a delay drawn from the configured range (any other digits)', async () => {
    const id = await fundedWith('gbr', null);
    sandbox.advance(clearing_ms);
    expect((await read(id)).state).toBe('processing');
    expect((await read(id)).may_cancel).toBe(false);
    sandbox.advance(delay_ms[1]);
    const paid = await read(id);
    expect(paid.state).toBe('paid');
    expect(paid.paid_at).not.toBeNull();
    await sandbox.deliveriesSettled();
    expect(receiver.statesOf(id)).toEqual(['approved', 'pending', 'received', 'processing', 'paid']);
    expect(receiver.deliveries.filter((d) => d.body.event_type === 'transaction.paid_out' && d.body.data.id === id)).toHaveLength(1);
  });

  it('11 pays quickly; 22 pays slowly', async () => {
    const quick = await fundedWith('deu', '11');
    const slow = await fundedWith('deu', '22');
    sandbox.advance(clearing_ms + quick_ms);
    expect((await read(quick)).state).toBe('paid');
    sandbox.advance(delay_ms[1]);
    expect((await read(slow)).state).toBe('processing');
    sandbox.advance(slow_delay_ms[1]);
    expect((await read(slow)).state).toBe('paid');
  });

  it('33 goes to error, is retried by the service and ends paid', async () => {
    const id = await fundedWith('ngaBank', '33');
    sandbox.advance(clearing_ms + delay_ms[1]);
    const failed = await read(id);
    expect(failed).toMatchObject({ state: 'error', may_cancel: true, state_reason_details: { code: 'provider_unavailable' } });
    expect(failed.state_reason).toMatch(/retried/);
    sandbox.advance(error_retry_ms + delay_ms[1]);
    expect((await read(id)).state).toBe('paid');
    await sandbox.deliveriesSettled();
    expect(receiver.statesOf(id)).toEqual(['approved', 'pending', 'received', 'processing', 'error', 'processing', 'paid']);
  });

  it('44 ends in error with a recipient code (phone for cash), and a cancellation refunds it', async () => {
    const cash = await fundedWith('ngaCash', '44');
    const bank = await fundedWith('global', '44');
    sandbox.advance(clearing_ms + delay_ms[1] + DAY);
    expect(await read(cash)).toMatchObject({ state: 'error', state_reason_details: { code: 'recipient_phone_number_invalid' }, may_cancel: true });
    expect(await read(bank)).toMatchObject({ state: 'error', state_reason_details: { code: 'recipient_bank_account_invalid' } });
    expect((await call(sandbox, 'DELETE', `/transactions/${cash}`)).status).toBe(202);
    sandbox.advance(DAY);
    expect(await read(cash)).toMatchObject({ state: 'refunded', refunded_amount_in_cents: expect.stringMatching(/^\d+$/) });
    await sandbox.deliveriesSettled();
    expect(receiver.statesOf(cash).slice(-3)).toEqual(['error', 'canceled', 'refunded']);
  });

  it('55 ends in manual with an account-invalid code, needing cancellation', async () => {
    const id = await fundedWith('gbr', '55');
    sandbox.advance(clearing_ms + delay_ms[1] + DAY);
    expect(await read(id)).toMatchObject({ state: 'manual', may_cancel: true, state_reason_details: { code: 'recipient_account_invalid' } });
  });

  it('66 ends stuck, which cannot be cancelled; 77 ends in exception', async () => {
    const stuck = await fundedWith('ngaCash', '66');
    const exception = await fundedWith('ngaBank', '77');
    sandbox.advance(clearing_ms + delay_ms[1] + 30 * DAY);
    expect(await read(stuck)).toMatchObject({ state: 'stuck', may_cancel: false, state_reason_details: { code: 'provider_timeout' } });
    expect((await call(sandbox, 'DELETE', `/transactions/${stuck}`)).status).toBe(422);
    expect(await read(exception)).toMatchObject({ state: 'exception', may_cancel: true, state_reason_details: { code: 'internal_exception' } });
  });

  it('cancels an unfunded transaction automatically when expires_at passes [3.2]', async () => {
    const created = (await call(sandbox, 'POST', '/transactions', createBody('gbr'))).body;
    const window = Date.parse(created.expires_at) - Date.parse(created.created_at);
    sandbox.advance(window - 1);
    expect((await read(created.id)).state).toBe('approved');
    sandbox.advance(1);
    const expired = await read(created.id);
    expect(expired).toMatchObject({ state: 'canceled', may_cancel: false, state_reason_details: { code: 'funding_window_expired' } });
    expect(expired.updated_at).toBe(expired.expires_at);
    const fund = await call(sandbox, 'POST', `/transactions/${created.id}/fund`);
    expect(fund.status).toBe(422);
    expect(fund.body.errors.state).toEqual(['a transaction in state canceled cannot be funded']);
  });

  it('moves time through the operator control too', async () => {
    const created = (await call(sandbox, 'POST', '/transactions', createBody('gbr'))).body;
    const before = Date.parse((await operator(sandbox, 'GET', '/time')).body.now);
    const advanced = (await operator(sandbox, 'POST', '/time/advance', { ms: 3_600_000 })).body;
    expect(Date.parse(advanced.now) - before).toBe(3_600_000);
    expect(advanced.steps_applied).toBeGreaterThan(0);
    expect((await read(created.id)).state).toBe('canceled');
  });
});

describe('senders and KYC [3.3]', () => {
  let sandbox: TestSandbox;
  let receiver: Receiver;
  afterEach(async () => {
    await sandbox.stop();
    await receiver.stop();
  });

  async function start(mode: 'waived' | 'review'): Promise<void> {
    sandbox = await testSandbox({ kyc: { mode, verify_after_ms: 60_000, approve_after_ms: 120_000, sanction_list: ['Sanctioned Person'] } });
    receiver = await startReceiver(sandbox.apiSecret);
    await subscribeAll(sandbox, receiver);
  }
  const senderEvents = () => receiver.deliveries.filter((d) => d.body.event_type.startsWith('sender.')).map((d) => d.body.event_type);

  it('in review mode: initial, then verified, then approved, releasing the waiting transactions', async () => {
    await start('review');
    const tx = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-NEW' } }))).body;
    expect(tx.state).toBe('initial');
    expect(tx.sender.state).toBe('initial');
    const early = await call(sandbox, 'POST', `/transactions/${tx.id}/fund`);
    expect(early.status).toBe(422);
    expect(early.body.errors.state).toEqual(['a transaction in state initial cannot be funded']);
    sandbox.advance(60_000);
    expect((await call(sandbox, 'GET', `/transactions/${tx.id}`)).body.sender.state).toBe('verified');
    sandbox.advance(120_000);
    const released = (await call(sandbox, 'GET', `/transactions/${tx.id}`)).body;
    expect(released.state).toBe('approved');
    expect(released.sender.state).toBe('approved');
    expect((await call(sandbox, 'POST', `/transactions/${tx.id}/fund`)).status).toBe(200);
    await sandbox.deliveriesSettled();
    expect(senderEvents()).toEqual(['sender.initial', 'sender.verified', 'sender.approved']);
    expect(receiver.statesOf(tx.id)).toEqual(['initial', 'approved', 'pending']);
  });

  it('in review mode, a sanctioned name ends rejected and its transactions are cancelled', async () => {
    await start('review');
    const tx = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-BAD', first_name: 'sanctioned', last_name: ' PERSON ' } }))).body;
    sandbox.advance(60_000);
    const after = (await call(sandbox, 'GET', `/transactions/${tx.id}`)).body;
    expect(after.sender.state).toBe('rejected');
    expect(after).toMatchObject({ state: 'canceled', state_reason_details: { code: 'sender_rejected' } });
    await sandbox.deliveriesSettled();
    expect(senderEvents()).toEqual(['sender.initial', 'sender.rejected']);
  });

  it('in waived mode, senders are approved at creation and a sanctioned one is rejected at once', async () => {
    await start('waived');
    const ok = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-OK' } }))).body;
    expect(ok.sender.state).toBe('approved');
    expect(ok.state).toBe('approved');
    const bad = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-SANCTIONED', first_name: 'Sanctioned', last_name: 'Person' } }))).body;
    expect(bad.sender.state).toBe('rejected');
    expect(bad.state).toBe('canceled');
    expect((await call(sandbox, 'POST', `/transactions/${bad.id}/fund`)).status).toBe(422);
  });

  it('never dates a released or stopped transaction before its own last change (a step applied after it was due)', async () => {
    await start('review');
    const first = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-LATE' } }))).body;
    const bad = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-LATE-BAD', first_name: 'Sanctioned', last_name: 'Person' } }))).body;
    // Both KYC steps are due (verified at 60 s, approved and rejected by 180 s), and the tick that applies them has not come yet.
    sandbox.clock.advance(200_000);
    const second = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-LATE' } }))).body;
    const badSecond = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-LATE-BAD', first_name: 'Sanctioned', last_name: 'Person' } }))).body;
    expect([second.state, badSecond.state]).toEqual(['initial', 'initial']);
    sandbox.service.tick();
    const read = async (id: string) => (await call(sandbox, 'GET', `/transactions/${id}`)).body;
    // The approval is stamped when it was due, except where that would move a transaction's updated_at back.
    expect(await read(first.id)).toMatchObject({ state: 'approved', updated_at: new Date(Date.parse(first.created_at) + 180_000).toISOString() });
    expect(await read(second.id)).toMatchObject({ state: 'approved', updated_at: second.updated_at });
    expect(await read(bad.id)).toMatchObject({ state: 'canceled', updated_at: new Date(Date.parse(bad.created_at) + 60_000).toISOString() });
    expect(await read(badSecond.id)).toMatchObject({ state: 'canceled', updated_at: badSecond.updated_at });
  });

  it('an operator can ban a sender, stopping its unfunded transactions', async () => {
    await start('waived');
    const tx = (await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-BANNED' } }))).body;
    const banned = await operator(sandbox, 'PUT', '/senders/S-BANNED/state', { state: 'banned' });
    expect(banned.status).toBe(200);
    expect((await call(sandbox, 'GET', `/transactions/${tx.id}`)).body.state).toBe('canceled');
  });
});
