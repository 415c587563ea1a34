/**
 * Corrections against the real sandbox over HTTP and a real SQLite file: a row
 * in error is cancelled, refunded, corrected and paid once (two corrections of
 * it racing: one paid, the other refused); a correction of a stuck row is
 * refused; rows refused for lack of balance are retried as they were once the
 * balance is topped up; the lineage of each original shows it paid at most once.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { cancelRows } from '../../src/engine/cancel.js';
import { correctionsFile } from '../../src/engine/corrections-file.js';
import { correctionExternalId } from '../../src/engine/corrections.js';
import { lineageOf } from '../../src/engine/lineage.js';
import { writeReconciliation } from '../../src/engine/reconcile-report.js';
import type { EngineContext } from '../helpers/engine.js';
import { atRest, debitsPerTransaction, engineContext, FAST_ENGINE, template } from '../helpers/engine.js';

type Record = { [column: string]: string };
const parseCsv = (text: string): Record[] => parse(text, { columns: true }) as Record[];
const toCsv = (rows: Record[]): string => stringify(rows, { header: true, columns: Object.keys(rows[0] as Record) });

describe('corrections: unpaid rows paid again, never twice', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('error → cancelled → refunded → corrected → paid once; two corrections racing, one paid; a stuck original refused; the lineage shows it', { timeout: 60_000 }, async () => {
    ctx = await engineContext();
    ctx.drop(template('demo-batch.csv'));
    const run = await ctx.run({ batch: { invalid_rows: 'skip_invalid' } }, 30_000, {}, { endWhen: atRest(ctx) });
    const batch = run.batches[0]?.batch as string;
    const line = async (externalId: string): Promise<number> => {
      for await (const row of ctx.store.rows(batch)) if (row.external_id === externalId) return row.line;
      throw new Error(`no ${externalId}`);
    };

    // While DEMO-013 is in error and DEMO-015 stuck, neither is offered for correction: both could still pay.
    let file = parseCsv((await correctionsFile(ctx.store, batch)).text);
    expect(file.map((r) => r.unpaid_state)).toEqual(['invalid', 'invalid']);
    expect(file.map((r) => r.to_fix)).toEqual(['recipient_bank_account', 'output_amount recipient_iban']);

    const engine = configSchema.parse({ engine: FAST_ENGINE }).engine;
    const client = ctx.client();
    const cancelled = await cancelRows({ batch, externalIds: ['DEMO-013'] }, { store: ctx.store, client, clock: systemClock, engine, log: () => {}, waitMs: 5000 });
    await client.close();
    expect(cancelled[0]).toMatchObject({ cancelled: true, state_after: 'refunded' });

    file = parseCsv((await correctionsFile(ctx.store, batch)).text);
    const errorLine = await line('DEMO-013');
    const correction = file.find((r) => r.original_line === String(errorLine)) as Record;
    expect(correction).toMatchObject({ external_id: 'DEMO-013~R1', original_batch: batch, unpaid_state: 'refunded', to_fix: 'recipient_phone_number', output_amount: '60.00' });
    expect(correction.unpaid_reason).toMatch(/recipient_phone_number_invalid/);
    // The fix: a phone number the sandbox pays (it ends the payout in error by the last two digits, 44).
    const fixed = { ...correction, recipient_phone_number: '+2348031234511' };
    // A correction of the stuck row, made by hand from the same row: refused, its original could still pay.
    const stuckLine = await line('DEMO-015');
    const ofStuck = { ...fixed, external_id: correctionExternalId('DEMO-015'), original_line: String(stuckLine) };
    writeFileSync(join(ctx.dir, 'a.csv'), toCsv([fixed, ofStuck]));
    // The same correction a second time, in another file (its content differs by a city): racing the first.
    writeFileSync(join(ctx.dir, 'b.csv'), toCsv([{ ...fixed, recipient_city: 'Ikeja' }]));
    ctx.drop(join(ctx.dir, 'a.csv'), 'a.csv');
    ctx.drop(join(ctx.dir, 'b.csv'), 'b.csv');
    const second = await ctx.run({}, 3000);
    const results = await Promise.all(second.batches.map(async (b) => ({ file: b.file, rows: await ctx.results(b.batch) })));
    const all: Record[] = results.flatMap((r) => r.rows.map((row) => ({ file: r.file, ...row })));
    const paid = all.filter((r) => r.external_id === 'DEMO-013~R1' && r.state === 'paid');
    expect(paid).toHaveLength(1);
    expect(all.filter((r) => r.external_id === 'DEMO-013~R1' && r.state !== 'paid').map((r) => r.state)).toEqual(['external_id_already_used']);
    const refused = all.find((r) => r.external_id === 'DEMO-015~R1') as Record;
    expect(refused.state).toBe('invalid');
    expect(refused.error).toMatch(/original_may_still_pay: not taken: the original could still pay \(it is stuck\)/);

    // At the service: one transaction for the correction, funded once; the original refunded.
    expect(ctx.sandbox.store.transactionByExternalId('DEMO-013')?.state).toBe('refunded');
    expect(ctx.sandbox.store.transactionByExternalId('DEMO-013~R1')?.state).toBe('paid');
    expect([...debitsPerTransaction(ctx.sandbox).values()].every((n) => n === 1)).toBe(true);

    const lineage = await lineageOf(ctx.store, batch, errorLine);
    expect(lineage?.paying).toBe(1);
    const steps = lineage?.steps.map((s) => [s.external_id, s.generation, s.state ?? s.outcome]) ?? [];
    expect(steps[0]).toEqual(['DEMO-013', 0, 'refunded']);
    expect(steps.slice(1)).toEqual(expect.arrayContaining([['DEMO-013~R1', 1, 'paid'], ['DEMO-013~R1', 1, 'external_id_already_used']]));
    expect(steps).toHaveLength(3);

    // The day's reconciliation lists the lineage and finds it paid once: 0 differences.
    const reportClient = ctx.client();
    const outcome = await writeReconciliation({ format: 'csv', spreadsheet: false, date: new Date().toISOString().slice(0, 10) }, {
      store: ctx.store, client: reportClient, workspace: ctx.workspace, reports: configSchema.parse({}).reports, readsPerSecond: 1000, ledgerUrl: `${ctx.sandbox.operatorUrl}/ledger`, sleep: async () => {},
    });
    await reportClient.close();
    expect(outcome.checks.differences).toEqual([]);
    const lineageFile = outcome.files.find((f) => f.endsWith('.lineage.csv')) as string;
    const listed = parseCsv(readFileSync(lineageFile, 'utf8')).filter((r) => r.root_external_id === 'DEMO-013');
    expect(listed.map((r) => [r.generation, r.external_id, r.ended, r.pays]).sort()).toEqual([
      ['0', 'DEMO-013', 'refunded', 'no'], ['1', 'DEMO-013~R1', 'external_id_already_used', 'no'], ['1', 'DEMO-013~R1', 'paid', 'yes'],
    ]);
  });

  it('retry: rows refused for lack of balance are paid again as they were once the balance is topped up', { timeout: 60_000 }, async () => {
    ctx = await engineContext({ balances: { USD: '600000' } });
    ctx.drop(template('templates/global-usd-bank.csv'), 'a.csv');
    await ctx.run({ engine: { concurrency: 1 } });
    ctx.drop(template('templates/gbr-bank.csv'), 'b.csv');
    const short = await ctx.run({ engine: { concurrency: 1 } });
    const batch = short.batches.find((b) => b.file === 'b.csv')?.batch as string;
    expect((await ctx.results(batch)).map((r) => r.state)).toEqual(['canceled', 'insufficient_funds']);
    const put = await fetch(`${ctx.sandbox.operatorUrl}/balances`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"USD": "100000000"}' });
    expect(put.status).toBe(200);
    const retry = await correctionsFile(ctx.store, batch, new Set(['insufficient_funds']));
    expect(retry.lines.map((l) => l.code)).toEqual(['insufficient_funds', 'insufficient_funds']);
    writeFileSync(join(ctx.dir, 'retry.csv'), retry.text);
    ctx.drop(join(ctx.dir, 'retry.csv'), 'retry.csv');
    const again = await ctx.run({ engine: { concurrency: 1 } });
    const child = again.batches[0]?.batch as string;
    expect((await ctx.results(child)).map((r) => [r.external_id, r.state])).toEqual([['GBR-2026-0001~R1', 'paid'], ['GBR-2026-0002~R1', 'paid']]);
    expect((await ctx.store.batch(child)) as unknown).toMatchObject({ corrects_batch: batch });
  });
});
