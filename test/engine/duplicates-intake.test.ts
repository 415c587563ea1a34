/**
 * Possible duplicate payments caught before money moves (issue 37): the real
 * sandbox over HTTP, a real SQLite file. A row paying the same IBAN the same
 * amount as a row of an earlier batch is not sent until a person allows it; one
 * whose twin may still pay (stuck) is held even with batch.on_duplicate warn,
 * and no allowance sends it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { allowRow } from '../../src/engine/allow.js';
import { cancelRows } from '../../src/engine/cancel.js';
import { previewBatch, previewFile } from '../../src/engine/preview.js';
import type { EngineContext } from '../helpers/engine.js';
import { FAST_ENGINE, engineContext, template } from '../helpers/engine.js';

/** A file of the demo's EUR row (Emmy Noether) under each external id, paying this IBAN as written. */
function eurBatch(dir: string, name: string, rows: readonly { id: string; iban: string }[]): string {
  const lines = readFileSync(template('demo-batch.csv'), 'utf8').split('\n');
  const eur = lines.find((l) => l.startsWith('DEMO-015,')) as string;
  const file = join(dir, name);
  writeFileSync(file, `${lines[0]}\n${rows.map((r) => eur.replace('DEMO-015', r.id).replace('DE53370400440532013066', r.iban)).join('\n')}\n`);
  return file;
}

const PAID_IBAN = 'DE89370400440532013000';
const STUCK_IBAN = 'DE53370400440532013066';

describe('possible duplicate payments', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());


  it('holds a second payment of the same IBAN and amount under another external_id until a person allows it, then pays it', async () => {
    ctx = await engineContext();
    ctx.drop(eurBatch(ctx.dir, 'first.csv', [{ id: 'INV-1', iban: PAID_IBAN }]));
    const first = await ctx.run({}, 5000);
    const firstBatch = first.batches[0]?.batch as string;
    expect((await ctx.results(firstBatch)).map((r) => [r.external_id, r.state])).toEqual([['INV-1', 'paid']]);

    // The same account written another way: spaces and lower case.
    const second = eurBatch(ctx.dir, 'second.csv', [{ id: 'INV-2', iban: 'de89 3704 0044 0532 0130 00' }, { id: 'INV-3', iban: 'DE44500105175407324931' }]);
    const deps = { store: ctx.store, client: null, config: configSchema.parse({}), clock: systemClock };
    const dry = await previewFile(second, deps);
    expect(dry.possible_duplicates).toEqual([expect.objectContaining({ line: 2, external_id: 'INV-2', action: 'hold', twin: expect.objectContaining({ batch: firstBatch, line: 2, external_id: 'INV-1', state: 'paid' }) })]);

    ctx.drop(second);
    const run = await ctx.run({}, 5000);
    const batch = run.batches.find((b) => b.batch !== firstBatch)?.batch as string;
    // Once INV-3 was paid, the run waited no longer: only a person moves INV-2 now.
    expect(ctx.events.some((e) => e.event === 'duplicates_held' && e.fields.batch === batch)).toBe(true);
    const held = await ctx.store.rowBySubmittedExternalId('INV-2');
    expect(held).toMatchObject({ phase: 'duplicate_hold', transaction_id: null, outcome: 'possible_duplicate' });
    expect(await ctx.store.rowBySubmittedExternalId('INV-3')).toMatchObject({ phase: 'final', state: 'paid' });
    const results = await ctx.results(batch);
    expect(results.map((r) => [r.external_id, r.state, r.state_reason_code])).toEqual([['INV-2', 'possible_duplicate', 'possible_duplicate'], ['INV-3', 'paid', '']]);
    expect(results[0]?.state_reason).toMatch(new RegExp(`possible duplicate of batch ${firstBatch} line 2 \\(external_id INV-1, paid, \\d{4}-\\d\\d-\\d\\d\\)`));
    expect(run.batches.find((b) => b.batch === batch)?.need_person).toBe(1);
    const preview = await previewBatch(batch, deps);
    expect(preview?.possible_duplicates).toEqual([expect.objectContaining({ line: 2, external_id: 'INV-2', action: 'hold', allowed_by: null, twin: expect.objectContaining({ batch: firstBatch, external_id: 'INV-1' }) })]);

    // A later run alone does not send it.
    await ctx.run({}, 500);
    expect(await ctx.store.rowBySubmittedExternalId('INV-2')).toMatchObject({ phase: 'duplicate_hold', transaction_id: null });

    const allowed = await allowRow({ batch, externalId: 'INV-2', reason: 'a second invoice, paid on purpose', person: 'Grace Hopper' }, { store: ctx.store, clock: systemClock, batch: deps.config.batch });
    expect(allowed).toMatchObject({ kind: 'allowed', line: 2 });
    const audit = await ctx.store.lastAudit('duplicate_allowed');
    expect(audit).toMatchObject({ actor: 'Grace Hopper', subject: `${batch} line 2` });
    expect(JSON.parse(audit?.details ?? '{}')).toMatchObject({ reason: 'a second invoice, paid on purpose', external_id: 'INV-2', twin: { batch: firstBatch, line: 2, external_id: 'INV-1' } });
    expect((await previewBatch(batch, deps))?.possible_duplicates[0]).toMatchObject({ allowed_by: 'Grace Hopper', allowed_reason: 'a second invoice, paid on purpose' });

    const after = await ctx.run({}, 5000);
    expect(after.batches.find((b) => b.batch === batch)?.unsettled).toBe(0);
    expect(await ctx.store.rowBySubmittedExternalId('INV-2')).toMatchObject({ phase: 'final', state: 'paid' });
    expect((await ctx.results(batch)).map((r) => [r.external_id, r.state])).toEqual([['INV-2', 'paid'], ['INV-3', 'paid']]);
  });

  it('holds a row whose twin is stuck even with batch.on_duplicate warn, and refuses to allow it while the twin may pay', async () => {
    ctx = await engineContext();
    ctx.drop(eurBatch(ctx.dir, 'first.csv', [{ id: 'STK-1', iban: STUCK_IBAN }]));
    await ctx.run({}, 1500);
    expect(await ctx.store.rowBySubmittedExternalId('STK-1')).toMatchObject({ state: 'stuck' });

    const config = { batch: { on_duplicate: 'warn' } };
    ctx.drop(eurBatch(ctx.dir, 'second.csv', [{ id: 'STK-2', iban: STUCK_IBAN }]));
    // The stuck twin's batch stays open: the run follows it for as long as it is given.
    const run = await ctx.run(config, 800);
    const batch = run.batches.find((b) => b.file === 'batch-2.csv')?.batch as string;
    expect(ctx.events.some((e) => e.event === 'duplicates_held' && e.fields.batch === batch)).toBe(true);
    expect(await ctx.store.rowBySubmittedExternalId('STK-2')).toMatchObject({ phase: 'duplicate_hold', transaction_id: null });
    const [finding] = await ctx.store.possibleDuplicates(batch);
    expect(finding?.detail).toMatch(/which may still pay: held, whatever batch.on_duplicate says/);

    const refused = await allowRow({ batch, externalId: 'STK-2', reason: 'the first is stuck', person: 'Grace Hopper' }, { store: ctx.store, clock: systemClock, batch: configSchema.parse(config).batch });
    expect(refused).toMatchObject({ kind: 'refused', why: expect.stringMatching(/may still pay: it stays held/) });
    expect(await ctx.store.lastAudit('duplicate_allowed')).toBeUndefined();
    await ctx.run(config, 500);
    expect(await ctx.store.rowBySubmittedExternalId('STK-2')).toMatchObject({ phase: 'duplicate_hold', transaction_id: null });
    expect(ctx.sandbox.store.ledger(0, 10_000).filter((e) => e.kind === 'debit')).toHaveLength(1);

    // A person ends it instead: never sent, and its batch settles with the row's state and reason code.
    const client = ctx.client();
    const engine = configSchema.parse({ engine: FAST_ENGINE }).engine;
    const [line] = await cancelRows({ batch, externalIds: ['STK-2'], by: 'Grace Hopper' }, { store: ctx.store, client, clock: systemClock, engine, log: () => {}, waitMs: 0 });
    await client.close();
    expect(line).toMatchObject({ external_id: 'STK-2', cancelled: true, state_after: 'not_sent' });
    const end = await ctx.run(config, 300);
    expect(end.batches.find((b) => b.batch === batch)).toMatchObject({ status: 'settled', unsettled: 0 });
    const [result] = await ctx.results(batch);
    expect(result).toMatchObject({ external_id: 'STK-2', state: 'possible_duplicate', state_reason_code: 'possible_duplicate', transaction_id: '' });
    expect(result?.state_reason).toMatch(/cancelled by Grace Hopper$/);
  });

  it('with approvals on, a row is allowed only before anyone approved its batch: approvers see the allowance before they sign', async () => {
    ctx = await engineContext();
    ctx.drop(eurBatch(ctx.dir, 'first.csv', [{ id: 'APR-1', iban: PAID_IBAN }]));
    await ctx.run({}, 5000);
    ctx.drop(eurBatch(ctx.dir, 'second.csv', [{ id: 'APR-2', iban: PAID_IBAN }]));
    const run = await ctx.run({}, 300);
    const batch = run.batches.find((b) => b.file === 'batch-2.csv')?.batch as string;
    const allow = () => allowRow({ batch, externalId: 'APR-2', reason: 'meant', person: 'Grace Hopper' }, { store: ctx.store, clock: systemClock, batch: configSchema.parse({}).batch });
    // As the approval gate records it (the signatures themselves are approvals.test.ts's concern).
    await ctx.store.setApprovalState(batch, 'approved', null);
    expect(await allow()).toMatchObject({ kind: 'refused', why: expect.stringMatching(/under approval \(approved\)/) });
    await ctx.store.setApprovalState(batch, 'awaiting', null);
    expect(await allow()).toMatchObject({ kind: 'allowed', line: 2 });
  });

  it('with batch.duplicate_window off, a second payment is sent as before', async () => {
    ctx = await engineContext();
    ctx.drop(eurBatch(ctx.dir, 'first.csv', [{ id: 'OFF-1', iban: PAID_IBAN }]));
    await ctx.run({}, 5000);
    ctx.drop(eurBatch(ctx.dir, 'second.csv', [{ id: 'OFF-2', iban: PAID_IBAN }]));
    await ctx.run({ batch: { duplicate_window: 'off' } }, 5000);
    expect(await ctx.store.rowBySubmittedExternalId('OFF-2')).toMatchObject({ phase: 'final', state: 'paid' });
  });
});
