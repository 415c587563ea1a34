/** The console's batches page says where each batch is (batch-stage.ts): "oldest in flight" only for rows at the service. Pure. */
import { describe, expect, it } from 'vitest';
import type { BatchStage } from '../../src/engine/batch-stage.js';
import { stageWords } from '../../src/engine/batch-stage.js';
import type { BatchStatus } from '../../src/engine/status.js';
import { batchesPage } from '../../src/console/views/batches.js';

const viewer = { person: 'ada', role: 'operator' as const, csrf: 'token', readOnly: true };

function batch(stage: BatchStage, over: Partial<BatchStatus> = {}): BatchStatus {
  return {
    batch: 'B20261127-00000001', file: 'pay.csv', status: 'accepted', received_at: '2026-11-27T12:00:00.000Z', settled_at: null, rows: 2,
    by_state: { not_sent_yet: 2 }, funded: {}, paid_out: {}, unsettled: 2, oldest_unsettled_age_s: 18, stage, stage_words: stageWords(stage),
    in_flight: 0, oldest_in_flight_age_s: null, attention: [], by_reason: {}, next_reads: [], approval: null, approval_reason: null, corrects: null,
    learned: { webhook: 0, polling: 0, answer: 0 }, ...over,
  };
}

describe('the batches page, by stage', () => {
  it('a batch awaiting approval is not "in flight": its stage is said instead', () => {
    const html = batchesPage(viewer, [batch({ kind: 'awaiting_approval', may_approve: ['ada', 'grace'], signed: [], expires_at: null }, { approval: 'awaiting' })]);
    expect(html).not.toMatch(/in flight/);
    expect(html).toContain('awaiting approval by ada or grace: nothing is sent before it');
  });

  it('rows at the service: the oldest in flight, and the next read', () => {
    const stage: BatchStage = { kind: 'in_flight', rows: { at_service: 2, sending: 0, not_sent_yet: 0 }, next_read_at: '2026-11-27T12:01:00.000Z', oldest_since: '2026-11-27T12:00:00.000Z' };
    const html = batchesPage(viewer, [batch(stage, { in_flight: 2, oldest_in_flight_age_s: 42 })]);
    expect(html).toMatch(/0 of 2 final, oldest in flight 42s/);
    expect(html).toMatch(/2 rows in flight at the service, next read at \d\d:\d\d:\d\d/);
  });
});
