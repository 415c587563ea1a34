/**
 * [3.3] A transaction created while its sender is still in KYC waits in
 * `initial`; the sender's approval releases it, and paybatch funds it. Here the
 * approval was already due when the second transaction was created, but not yet
 * applied (the sandbox applies due steps on its tick): the chaos run of seed
 * 425732 left such a row created/initial for good, every read of its `approved`
 * transaction judged older than the `initial` it had stored, because the
 * released transaction's updated_at went back to the moment the approval was due.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineContext } from '../helpers/engine.js';
import { debitsPerTransaction, engineContext, template } from '../helpers/engine.js';

describe('a sender approved while its transactions wait', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  // Three runs that each wait their whole --wait for a row that cannot end: 15 s on a quiet machine, past the 20 s
  // bound under two busy loops (test:busy). A bound for a loaded machine.
  it('funds a row created after its sender\'s approval was due but before the service applied it', { timeout: 60_000 }, async () => {
    // No tick of its own: the test applies the sandbox's due steps when it chooses.
    ctx = await engineContext({ tick_ms: 3_600_000, kyc: { mode: 'review', verify_after_ms: 1, approve_after_ms: 1 } });
    const [header, first] = readFileSync(template('templates/gbr-bank.csv'), 'utf8').split('\n');
    const file = (name: string, externalId: string): string => {
      const path = join(ctx.dir, name);
      writeFileSync(path, `${header}\n${(first as string).replace('GBR-2026-0001', externalId)}\n`);
      return path;
    };

    // The first transaction creates sender SND-0001 in KYC (verified, then approved, due 2 ms later);
    // the run follows it for up to 3 s (on a busy machine the create alone may take a while): the approval is due when it ends, and not applied.
    ctx.drop(file('a.csv', 'GBR-SHARED-A'), 'a.csv');
    expect((await ctx.run({}, 3000)).batches[0]?.by_state).toEqual({ initial: 1 });
    // The second transaction of the same sender is created initial, after the approval was due.
    ctx.drop(file('b.csv', 'GBR-SHARED-B'), 'b.csv');
    // The same recipient and amount again on purpose: not held as a possible duplicate (duplicates-intake.test.ts).
    expect((await ctx.run({ batch: { duplicate_window: 'off' } }, 3000)).batches.find((b) => b.file.endsWith('b.csv'))?.by_state).toEqual({ initial: 1 });
    const created = [...ctx.sandbox.store.allTransactions()].find((t) => t.external_id === 'GBR-SHARED-B');
    // The service applies the approval: both transactions are approved.
    ctx.sandbox.service.tick();
    const released = [...ctx.sandbox.store.allTransactions()].find((t) => t.external_id === 'GBR-SHARED-B');
    expect(released?.state).toBe('approved');
    // A transaction's updated_at never goes back: the approval is news after the initial it replaces.
    expect(released?.updated_at).toBeGreaterThanOrEqual(created?.updated_at as number);

    const report = await ctx.run({}, 2000);
    expect(report.batches.map((b) => b.by_state)).toEqual([{ pending: 1 }, { pending: 1 }]);
    const debits = debitsPerTransaction(ctx.sandbox);
    expect(debits.size).toBe(2);
    expect([...debits.values()]).toEqual([1, 1]);
  });
});
