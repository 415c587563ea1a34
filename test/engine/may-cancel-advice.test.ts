/**
 * Advice by what the service said (issue 37): the real sandbox over HTTP, a
 * real SQLite file. Each row keeps the service's may_cancel as last seen, and
 * the advice (status, the result file's next_step) follows it: a stuck payout
 * the service will not let paybatch stop is to be waited for or asked about,
 * never paid again; one the service says may be cancelled is offered the
 * cancel. The sandbox says may_cancel false for every stuck payout; a proxy in
 * front of it says true for one of them, as a service that can still stop a
 * stuck payout would.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { attentionRows } from '../../src/console/console-data.js';
import { attentionPage } from '../../src/console/views/attention.js';
import type { Viewer } from '../../src/console/views/layout.js';
import { readStatus } from '../../src/engine/status.js';
import { atRest, template } from '../helpers/engine.js';
import { eachTransaction, engineBehindLiar } from '../helpers/lying-service.js';

/** The demo's EUR row, whose IBAN ends in 66 (stuck at the sandbox), under each id and amount. */
function stuckBatch(dir: string, rows: readonly { id: string; amount: string }[]): string {
  const lines = readFileSync(template('demo-batch.csv'), 'utf8').split('\n');
  const eur = lines.find((l) => l.startsWith('DEMO-015,')) as string;
  const file = join(dir, 'stuck.csv');
  writeFileSync(file, `${lines[0]}\n${rows.map((r) => eur.replace('DEMO-015', r.id).replace(',300.00,', `,${r.amount},`)).join('\n')}\n`);
  return file;
}

describe('advice by the service\'s may_cancel', () => {
  const setting = engineBehindLiar();

  it('a stuck row the service will not let be cancelled is to be waited for or asked about; one it lets be cancelled is offered the cancel', async () => {
    const { ctx, liar } = setting;
    liar.lie({ match: {}, act: eachTransaction('may_cancel_true', (tx) => (tx.external_id === 'STK-YES' && tx.state === 'stuck' ? { ...tx, may_cancel: true } : tx)) });
    ctx.drop(stuckBatch(ctx.dir, [{ id: 'STK-NO', amount: '300.00' }, { id: 'STK-YES', amount: '301.00' }]));
    const run = await ctx.run({}, 30_000, {}, { endWhen: atRest(ctx) });
    const batch = run.batches[0]?.batch as string;

    expect(await ctx.store.row(batch, 2)).toMatchObject({ state: 'stuck', may_cancel: false });
    expect(await ctx.store.row(batch, 3)).toMatchObject({ state: 'stuck', may_cancel: true });

    const attention = (await readStatus(ctx.store, systemClock, batch)).batches[0]?.attention ?? [];
    const no = attention.find((a) => a.external_id === 'STK-NO')?.action ?? '';
    const yes = attention.find((a) => a.external_id === 'STK-YES')?.action ?? '';
    expect(no).toMatch(/cannot stop it now.*wait for it, or ask the service/);
    expect(no).not.toMatch(/paybatch cancel/);
    expect(yes).toContain(`paybatch cancel --batch ${batch} --external-id STK-YES`);
    for (const action of [no, yes]) expect(action).toMatch(/Never pay it again while it may still pay out|Do not pay it again: it may still pay out/);

    // The result file gives the same next step, in its last column.
    const results = await ctx.results(batch);
    expect(Object.keys(results[0] ?? {}).at(-1)).toBe('next_step');
    expect(results.map((r) => [r.external_id, r.state, r.next_step])).toEqual([['STK-NO', 'stuck', no], ['STK-YES', 'stuck', yes]]);

    // The console's attention page offers the cancel only where the service said it may be cancelled, and says why not.
    const page = await attentionRows(ctx.store, systemClock);
    expect(page.map((a) => [a.external_id, a.cancellable, a.not_cancellable])).toEqual(expect.arrayContaining([
      ['STK-NO', false, 'the service does not let it be cancelled now (may_cancel false)'], ['STK-YES', true, null],
    ]));
    expect(attentionPage({ person: 'ops', role: 'operator', readOnly: false, csrf: 't' } satisfies Viewer, page)).toContain('may_cancel false');
  });
});
