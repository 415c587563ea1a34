/**
 * A batch with nothing to send needs no approval, and says so: a file resubmitted
 * whose every row's external_id an earlier batch used is taken in with its
 * approval "not_needed" (why, in words), no approval is requested, and it
 * settles; it never waits for an approval nobody can give.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/approvals/keys.js';
import { systemClock } from '../../src/clock.js';
import { readStatus, renderStatus } from '../../src/engine/status.js';
import { renderRun } from '../../src/cli/run-command.js';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, gbrRowsBatch } from '../helpers/engine.js';

const keys = { ada: generateKeys(), inbox: generateKeys() };
const config = {
  approvals: {
    enabled: true, inbox_submitter: 'inbox', rules: [{ approvers: 1 }],
    people: { ada: { role: 'approver', public_key: keys.ada.publicPem }, inbox: { role: 'submitter', public_key: keys.inbox.publicPem } },
  },
};

describe('a batch with nothing to send', () => {
  let ctx: EngineContext;
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-nothing-to-send-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => ctx.stop());

  it('needs no approval: approval not_needed with why, none requested, the batch settles', async () => {
    ctx = await engineContext();
    ctx.drop(gbrRowsBatch(dir, 'first.csv', ['N-1', 'N-2']), 'first.csv');
    const first = await ctx.run(config, 1000);
    const firstBatch = first.batches[0]?.batch as string;
    expect((await ctx.store.batch(firstBatch))?.approval).toBe('awaiting');
    const requested = ctx.events.filter((e) => e.event === 'approval_requested').length;
    expect(requested).toBe(1);

    // The same payouts again, in another file (another order: not the same content): every external_id is taken.
    ctx.drop(gbrRowsBatch(dir, 'again.csv', ['N-2', 'N-1']), 'again.csv');
    const again = await ctx.run(config, 1000);
    const summary = again.batches.find((b) => b.file === 'again.csv');
    const batch = summary?.batch as string;
    expect(summary).toMatchObject({ status: 'settled', unsettled: 0, by_state: { external_id_already_used: 2 } });
    expect(await ctx.store.batch(batch)).toMatchObject({ approval: 'not_needed', approval_reason: 'nothing to send (2 with an external_id an earlier batch used): no approval is needed' });
    expect(ctx.events.filter((e) => e.event === 'approval_requested')).toHaveLength(requested);
    expect(renderRun(again)).toContain(`${batch} (again.csv): 2 rows: external_id_already_used 2; all final\n  nothing to send (2 with an external_id an earlier batch used): no approval is needed\n`);
    expect(renderStatus(await readStatus(ctx.store, systemClock, batch))).toMatch(/approval: not_needed \(nothing to send \(2 with an external_id an earlier batch used\): no approval is needed\)\n/);
    // The console's banner counts batches awaiting approval: this one is not.
    const { batchesPage } = await import('../../src/console/views/batches.js');
    const status = await readStatus(ctx.store, systemClock, batch);
    expect(batchesPage({ name: 'ada', role: 'viewer', readOnly: true } as never, status.batches)).not.toMatch(/\d+ batch(es)? awaiting approval<\/a>/);
  });
});
