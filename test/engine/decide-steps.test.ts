/**
 * The decisions the steps apply around their calls (decide.ts, step-decisions.ts): each made from the
 * row as stored, pure, and 'stale' (nothing changed) when the row is not where it
 * applies any more.
 */
import { describe, expect, it } from 'vitest';
import type { Decision, Policy } from '../../src/engine/decide.js';
import {
  afterRefusedCommit, cancelOnRequest, cancelOnRequestUndone, claimForCreate, endByPaybatch, fundingCallRefused, refuseUnapproved, refusedByService,
} from '../../src/engine/step-decisions.js';
import type { PollingPolicy } from '../../src/engine/read-schedule.js';
import type { PipelineRow } from '../../src/store/port.js';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const POLLING: PollingPolicy = { first_window_ms: 3_600_000, first_window_reads: 6, later_interval_ms: 3_600_000, reads_per_second: 5 };
const POLICY: Policy = { maxInputPerRow: {}, allowance: () => null, unapprovedRow: () => null, fundingDeadlineMs: 50 * 60_000, polling: POLLING, fundAttempts: 3 };

const row = (over: Partial<PipelineRow>): PipelineRow => ({
  batch_id: 'B1', line: 2, external_id: 'X-1', phase: 'created', outcome: null, outcome_detail: null, transaction_id: 'tx-1', state: 'approved', state_reason: null,
  state_reason_code: null, input_amount: '1000', input_currency: 'USD', output_amount: '800', output_currency: 'GBP', refunded_amount: null, created_at: iso(NOW - 60_000),
  funded_at: null, paid_at: null, refunded_at: null, settled_at: null, observed_at: null, heard_at: null, reads: 0, next_read_at: null, fund_attempts: 0, revision: 3,
  request: { output_amount_in_cents: '800', output_currency_code: 'GBP', input_currency_code: 'USD' } as PipelineRow['request'], ...over,
});
const phases = (decision: Decision): unknown => decision.patch?.changes.phase;

describe('the steps\' decisions (decide.ts)', () => {
  it('claims a ready row for its create, stamped when paybatch asked, and nothing else', () => {
    const claimed = claimForCreate(row({ phase: 'ready' }), NOW);
    expect(claimed.patch?.changes).toEqual({ phase: 'creating', created_at: iso(NOW) });
    expect(claimed.patch?.audits).toMatchObject([{ action: 'create_requested', at: iso(NOW), details: { external_id: 'X-1', amount: '800', currency: 'GBP' } }]);
    expect(claimForCreate(row({ phase: 'creating' }), NOW)).toMatchObject({ patch: null, label: 'stale' });
  });

  it('ends a row the service refused to create, with its reasons', () => {
    expect(refusedByService(row({ phase: 'creating' }), 'external_id: invalid', 'refused').patch?.changes).toMatchObject({ phase: 'final', outcome: 'rejected_by_service', outcome_detail: 'external_id: invalid' });
  });

  it('refuses a row not signed for: ready ends not sent, creating is held, anything else stays', () => {
    expect(phases(refuseUnapproved(row({ phase: 'ready' }), 'why'))).toBe('not_sent');
    expect(refuseUnapproved(row({ phase: 'creating' }), 'why')).toMatchObject({ label: 'held', patch: { changes: { phase: 'held', next_read_at: null } } });
    expect(refuseUnapproved(row({ phase: 'created' }), 'why')).toMatchObject({ patch: null, label: 'stale' });
  });

  it('cancels a row whose funding call was refused only while it is being funded', () => {
    const refused = fundingCallRefused(row({ phase: 'funding' }), 'insufficient_funds', 'no balance', NOW, POLLING);
    expect(refused).toMatchObject({ action: { kind: 'cancel', outcome: 'insufficient_funds' }, patch: { changes: { phase: 'cancelling' } } });
    expect(fundingCallRefused(row({ phase: 'funded' }), 'insufficient_funds', 'no balance', NOW, POLLING).patch).toBeNull();
  });

  it('ends a row by paybatch\'s decision from the phases named, or keeps the reason on a row the service cancelled meanwhile', () => {
    const end = { outcome: 'sender_rejected', detail: 'the sender was banned', phases: ['created'] } as const;
    expect(phases(endByPaybatch(row({}), end, NOW, POLLING))).toBe('cancelling');
    expect(endByPaybatch(row({ phase: 'funded' }), end, NOW, POLLING).patch).toBeNull();
    const canceled = row({ phase: 'final', state: 'canceled' });
    expect(endByPaybatch(canceled, end, NOW, POLLING).patch).toBeNull();
    expect(endByPaybatch(canceled, { ...end, reasonIfCanceled: true }, NOW, POLLING).patch?.changes).toEqual({ outcome: 'sender_rejected', outcome_detail: 'the sender was banned' });
  });

  it('moves a row to cancelling on request from where it was, and back when the service refuses', () => {
    const held = row({ phase: 'held', outcome: 'answer_mismatch', outcome_detail: 'x' });
    const asked = cancelOnRequest(held, 'held', { by: 'ada', detail: 'cancelled on request by ada', state: 'approved' }, NOW, POLLING);
    expect(asked.patch?.changes).toMatchObject({ phase: 'cancelling', outcome: 'cancelled_on_request' });
    expect(asked.patch?.audits).toMatchObject([{ action: 'cancel_requested', actor: 'ada' }]);
    expect(cancelOnRequest(row({ phase: 'funded' }), 'held', { by: null, detail: '', state: 'approved' }, NOW, POLLING).patch).toBeNull();
    expect(cancelOnRequestUndone(row({ phase: 'cancelling' }), held).patch?.changes).toEqual({ phase: 'held', outcome: 'answer_mismatch', outcome_detail: 'x' });
    expect(cancelOnRequestUndone(row({ phase: 'final' }), held).patch).toBeNull();
  });

  it('after a refused commit: over the budget or stopped, the funding is refused with the limit, the states learned kept; another row\'s transaction, held', () => {
    const funding: Decision = {
      patch: {
        changes: { phase: 'funding', state: 'approved', fund_attempts: 1, next_read_at: null }, reserve: { currency: 'USD', amount: 1000n, budget: 1500n },
        audits: [{ action: 'state_learned', at: iso(NOW), details: {} }, { action: 'fund_requested', at: iso(NOW), details: {} }],
      },
      action: { kind: 'fund', amount: '1000', currency: 'USD' }, label: 'applied',
    };
    const over = afterRefusedCommit(row({}), funding, { kind: 'over_budget', committed: 800n }, NOW, POLICY);
    expect(over.patch?.changes).toMatchObject({ phase: 'cancelling', outcome: 'over_budget', state: 'approved', outcome_detail: 'input 10.00 USD would take the batch to 18.00 USD, over its budget 15.00 USD (engine.batch_budget, or the ceiling approved)' });
    expect(over.patch?.audits?.map((a) => a.action)).toEqual(['state_learned', 'cancel_requested']);
    expect(afterRefusedCommit(row({}), funding, { kind: 'stopped', detail: 'USD stopped' }, NOW, POLICY).patch?.changes).toMatchObject({ outcome: 'insufficient_funds', outcome_detail: 'not funded: USD stopped' });
    const taken = afterRefusedCommit(row({}), { ...funding, patch: { changes: { transaction_id: 'tx-9' } } }, { kind: 'taken', batch_id: 'B0', line: 7 }, NOW, POLICY);
    expect(taken).toMatchObject({ action: { kind: 'hold' }, patch: { changes: { phase: 'held', outcome: 'answer_mismatch' } } });
    expect(taken.patch?.audits?.map((a) => a.action)).toEqual(['answer_mismatch']);
  });
});
