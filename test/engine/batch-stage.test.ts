/** The words for where a batch is (engine/batch-stage.ts): pure, from stored facts. */
import { describe, expect, it } from 'vitest';
import type { StageFacts } from '../../src/engine/batch-stage.js';
import { batchStage, canMoveOnItsOwn, clockTime, stageWords } from '../../src/engine/batch-stage.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const none = { not_sent_yet: 0, sending: 0, at_service: 0, oldest_in_flight_at: null };

function facts(batch: Partial<StageFacts['batch']>, rows: Partial<StageFacts['rows']> = {}, more: Partial<StageFacts> = {}): StageFacts {
  return {
    batch: { status: 'accepted', reason: null, settled_at: null, send_after: NOW - 1000, released: 1, approval: null, approval_reason: null, approval_expires_at: null, ...batch },
    rows: { ...none, ...rows }, nextReadAt: null, now: NOW, ...more,
  };
}

describe('the stage of a batch', () => {
  it('awaiting approval, with rows still ready: awaiting approval by whom, never in flight', () => {
    const stage = batchStage(facts({ approval: 'awaiting', released: 0, approval_expires_at: '2026-11-28T12:00:00.000Z' }, { not_sent_yet: 2 }, { approvals: { mayApprove: ['alice', 'bob'], signed: ['carol'] } }));
    expect(stage.kind).toBe('awaiting_approval');
    const words = stageWords(stage);
    expect(words).toBe('awaiting approval by alice or bob (signed so far: carol): nothing is sent before it; the request expires 2026-11-28T12:00:00.000Z');
    expect(words).not.toMatch(/in flight/);
    expect(canMoveOnItsOwn(stage)).toBe(false);
  });

  it('rejected by an approver while its rows still say ready: rejected, nothing sent, not in flight', () => {
    const stage = batchStage(facts({ approval: 'rejected', approval_reason: 'rejected by alice: wrong month' }, { not_sent_yet: 2 }));
    expect(stage).toEqual({ kind: 'rejected', by: 'approver', reason: 'rejected by alice: wrong month' });
    expect(stageWords(stage)).toBe('rejected (rejected by alice: wrong month); nothing of it was sent');
    expect(canMoveOnItsOwn(stage)).toBe(false);
  });

  it('an expired approval, and a file rejected at intake, are rejected too', () => {
    expect(stageWords(batchStage(facts({ approval: 'expired', approval_reason: null }, { not_sent_yet: 1 })))).toBe('rejected: its approval expired; nothing of it was sent');
    expect(stageWords(batchStage(facts({ status: 'rejected', reason: '3 invalid rows (policy reject_file)' })))).toBe('rejected at intake (3 invalid rows (policy reject_file)); nothing of it was sent');
    // Still settled as rejected afterwards: the approver's word stays the batch's word.
    expect(batchStage(facts({ status: 'settled', approval: 'rejected', settled_at: '2026-11-27T12:00:00Z' })).kind).toBe('rejected');
  });

  it('not released yet, before its second look: waiting for its file until then', () => {
    const stage = batchStage(facts({ released: 0, send_after: NOW + 15_000 }, { not_sent_yet: 20 }));
    expect(stage).toEqual({ kind: 'waiting_for_file', until: new Date(NOW + 15_000).toISOString() });
    expect(stageWords(stage)).toBe(`waiting until ${clockTime(NOW + 15_000)} to see its file unchanged once more before anything is sent`);
    expect(canMoveOnItsOwn(stage)).toBe(true);
  });

  it('rows never sent are "not sent yet", never in flight', () => {
    const stage = batchStage(facts({}, { not_sent_yet: 20 }));
    expect(stage.kind).toBe('not_sent_yet');
    expect(stageWords(stage)).toBe('20 rows not sent yet');
  });

  it('create calls under way: sending', () => {
    expect(stageWords(batchStage(facts({}, { sending: 3, not_sent_yet: 17 })))).toBe('sending 3 rows; 17 not sent yet');
  });

  it('rows at the service: in flight, with the next read, and the rest said beside', () => {
    const stage = batchStage(facts({}, { at_service: 2, sending: 1, not_sent_yet: 4, oldest_in_flight_at: '2026-11-27T11:59:00Z' }, { nextReadAt: NOW + 30_000 }));
    expect(stage).toMatchObject({ kind: 'in_flight', next_read_at: new Date(NOW + 30_000).toISOString(), oldest_since: '2026-11-27T11:59:00Z' });
    expect(stageWords(stage)).toBe(`2 rows in flight at the service, next read at ${clockTime(NOW + 30_000)}; 1 being sent, 4 not sent yet`);
  });

  it('held for a person: still moving while rows are at the service, not otherwise', () => {
    const held = batchStage(facts({ approval: 'held', approval_reason: 'a row edited after approval' }, { at_service: 1 }, { nextReadAt: NOW }));
    expect(stageWords(held)).toBe(`held for a person (a row edited after approval); 1 row in flight at the service, next read at ${clockTime(NOW)}`);
    expect(canMoveOnItsOwn(held)).toBe(true);
    expect(canMoveOnItsOwn(batchStage(facts({ approval: 'held', approval_reason: null }, { not_sent_yet: 1 })))).toBe(false);
  });

  it('settled, and being taken in', () => {
    expect(stageWords(batchStage(facts({ status: 'settled', settled_at: '2026-11-27T12:00:00Z' })))).toBe('all final');
    expect(stageWords(batchStage(facts({})))).toBe('all final');
    expect(batchStage(facts({ status: 'intake' })).kind).toBe('taking_in');
  });

  it('the clock time is the local hour, minute and second', () => {
    const at = new Date(2026, 10, 27, 9, 4, 31).getTime();
    expect(clockTime(at)).toBe('09:04:31');
  });
});
