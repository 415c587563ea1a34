/**
 * A payment said twice in one file (issue 37, "an earlier row"): the real
 * sandbox over HTTP, a real SQLite file. The earlier line is sent as usual;
 * the later line paying the same IBAN the same amount in the same currency is
 * the possible duplicate, decided by batch.on_duplicate like a twin of an
 * earlier batch, listed by the preview of the file and of the batch.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { allowRow } from '../../src/engine/allow.js';
import { renderPreview } from '../../src/cli/preview-command.js';
import { approvalPage } from '../../src/console/views/approvals.js';
import type { Preview } from '../../src/engine/preview.js';
import { previewBatch, previewFile } from '../../src/engine/preview.js';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, template } from '../helpers/engine.js';

/** A file of the demo's EUR row (Emmy Noether) under each external id, paying this IBAN. */
function eurBatch(dir: string, name: string, rows: readonly { id: string; iban: string }[]): string {
  const lines = readFileSync(template('demo-batch.csv'), 'utf8').split('\n');
  const eur = lines.find((l) => l.startsWith('DEMO-015,')) as string;
  const file = join(dir, name);
  writeFileSync(file, `${lines[0]}\n${rows.map((r) => eur.replace('DEMO-015', r.id).replace('DE53370400440532013066', r.iban)).join('\n')}\n`);
  return file;
}

const IBAN = 'DE89370400440532013000';
const OTHER = 'DE44500105175407324931';

describe('the same payment twice in one file', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('sends the earlier line and holds the later one until a person allows it', async () => {
    ctx = await engineContext();
    // The later line writes the same account another way: spaces and lower case.
    const file = eurBatch(ctx.dir, 'twice.csv', [{ id: 'SF-1', iban: IBAN }, { id: 'SF-2', iban: 'de89 3704 0044 0532 0130 00' }, { id: 'SF-3', iban: OTHER }]);
    const deps = { store: ctx.store, client: null, config: configSchema.parse({}), clock: systemClock };
    const dry = await previewFile(file, deps);
    expect(dry.possible_duplicates).toEqual([expect.objectContaining({ line: 3, external_id: 'SF-2', action: 'hold', twin: expect.objectContaining({ line: 2, external_id: 'SF-1', same_file: true }) })]);
    expect(dry.possible_duplicates[0]?.detail).toMatch(/^possible duplicate of line 2 of the same file \(external_id SF-1, sent first\): held/);

    ctx.drop(file);
    const run = await ctx.run({}, 5000);
    const batch = run.batches[0]?.batch as string;
    expect(await ctx.store.rowBySubmittedExternalId('SF-1')).toMatchObject({ phase: 'final', state: 'paid' });
    expect(await ctx.store.rowBySubmittedExternalId('SF-2')).toMatchObject({ phase: 'duplicate_hold', transaction_id: null, outcome: 'possible_duplicate' });
    expect(await ctx.store.rowBySubmittedExternalId('SF-3')).toMatchObject({ phase: 'final', state: 'paid' });
    expect(run.batches[0]?.need_person).toBe(1);
    const preview = await previewBatch(batch, deps);
    expect(preview?.possible_duplicates).toEqual([expect.objectContaining({ line: 3, external_id: 'SF-2', action: 'hold', allowed_by: null, twin: expect.objectContaining({ batch, line: 2, external_id: 'SF-1', same_file: true }) })]);
    // As people read it: the preview's text and the console's approval page.
    expect(renderPreview(preview as Preview, batch)).toMatch(/line 3 {2}SF-2 {2}twin of line 2 of the same file \(external_id SF-1, sent first\) {2}held: not sent until allowed/);
    const page = approvalPage({ name: 'ada', role: 'approver', readOnly: false } as never, batch, { preview: preview as Preview, statement: { refused: 'not awaiting approval' }, ceiling: {}, query: '' });
    expect(page).toMatch(/<td role="cell"[^>]*>line 2 of this file<\/td>/);
    expect(ctx.sandbox.store.ledger(0, 10_000).filter((e) => e.kind === 'debit')).toHaveLength(2);

    expect(await allowRow({ batch, externalId: 'SF-2', reason: 'two invoices, same amount', person: 'Grace Hopper' }, { store: ctx.store, clock: systemClock, batch: deps.config.batch }))
      .toMatchObject({ kind: 'allowed', line: 3 });
    await ctx.run({}, 5000);
    expect(await ctx.store.rowBySubmittedExternalId('SF-2')).toMatchObject({ phase: 'final', state: 'paid' });
    expect((await ctx.results(batch)).map((r) => [r.external_id, r.state])).toEqual([['SF-1', 'paid'], ['SF-2', 'paid'], ['SF-3', 'paid']]);
  });

  it('with batch.on_duplicate warn sends both and lists the later; with allow lists nothing; with the window off looks for nothing', async () => {
    ctx = await engineContext();
    const cases = [
      { prefix: 'W', iban: 'DE78370400440532013101', batch: { on_duplicate: 'warn' }, found: [[3, 'warn']] },
      { prefix: 'A', iban: 'DE51370400440532013102', batch: { on_duplicate: 'allow' }, found: [] },
      { prefix: 'O', iban: 'DE24370400440532013103', batch: { duplicate_window: 'off' }, found: [] },
    ];
    for (const c of cases) {
      ctx.drop(eurBatch(ctx.dir, `${c.prefix}.csv`, [{ id: `${c.prefix}-1`, iban: c.iban }, { id: `${c.prefix}-2`, iban: c.iban }]));
      await ctx.run({ batch: c.batch }, 5000);
      for (const id of [`${c.prefix}-1`, `${c.prefix}-2`]) expect(await ctx.store.rowBySubmittedExternalId(id)).toMatchObject({ phase: 'final', state: 'paid' });
      const batch = (await ctx.store.rowBySubmittedExternalId(`${c.prefix}-2`))?.batch_id as string;
      expect((await ctx.store.possibleDuplicates(batch)).map((f) => [f.line, f.action])).toEqual(c.found);
    }
  });
});
