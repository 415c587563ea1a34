/**
 * The call slots (src/engine/call-slots.ts): never more steps holding one than
 * there are slots, first come first served; a step that gives its slot back
 * before its end lets the next one start, and takes a slot again for any call it
 * still makes. Then the engine itself, against a double in front of the real
 * sandbox that counts the calls in flight: rows give their slot back once their
 * funding has answered, and the calls that follow (a read after a lost answer)
 * still never go past engine.concurrency: a funding refused or unanswered keeps
 * its slot for what follows (the read that finds out, the currency stopped).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallSlots } from '../../src/engine/call-slots.js';
import { gate, turns } from '../helpers/gates.js';
import type { EngineContext } from '../helpers/engine.js';
import { debitsPerTransaction, engineContext, gbrRowsBatch } from '../helpers/engine.js';
import type { LyingService } from '../helpers/lying-service.js';
import { PATHS, delay, loseAnswerAfterCommit, lyingService, rule } from '../helpers/lying-service.js';

describe('call slots', () => {
  it('run at most `size` steps at once, first come first served, each to its end', async () => {
    const slots = new CallSlots(2);
    const started: number[] = [];
    const gates = [gate(), gate(), gate(), gate()];
    const steps = gates.map((g, i) => slots.run(async () => {
      started.push(i);
      await g.opened;
      return i;
    }));
    await turns();
    expect(started).toEqual([0, 1]);
    expect(slots.activeSteps).toBe(2);
    gates[1]?.open();
    await turns();
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.open();
    gates[2]?.open();
    gates[3]?.open();
    expect(await Promise.all(steps)).toEqual([0, 1, 2, 3]);
    expect(slots.activeSteps).toBe(0);
  });

  it('a step that gives its slot back lets the next start, and is still counted until its end', async () => {
    const slots = new CallSlots(1);
    const started: string[] = [];
    const first = gate();
    const a = slots.run(async (slot) => {
      started.push('a');
      slot.release();
      // Twice: the second gives nothing back (else two steps would run on one slot).
      slot.release();
      await first.opened;
    });
    const second = gate();
    const b = slots.run(async () => {
      started.push('b');
      await second.opened;
    });
    const c = slots.run(async () => {
      started.push('c');
    });
    await turns();
    expect(started).toEqual(['a', 'b']);
    expect(slots.activeSteps).toBe(2);
    first.open();
    await a;
    // a's end gave nothing back: it had already; c still waits for b's slot.
    await turns();
    expect(started).toEqual(['a', 'b']);
    second.open();
    await Promise.all([b, c]);
    expect(started).toEqual(['a', 'b', 'c']);
  });

  it('a call after the slot was given back waits for a slot, behind the steps already waiting, and gives it back after', async () => {
    const slots = new CallSlots(1);
    const order: string[] = [];
    const later = gate();
    const callMayEnd = gate();
    const a = slots.run(async (slot) => {
      slot.release();
      await later.opened;
      order.push('a asks for a call');
      await slot.call(async () => {
        order.push('a calls');
        await callMayEnd.opened;
      });
      order.push('a done');
    });
    const bRuns = gate();
    const b = slots.run(async () => {
      order.push('b runs');
      await bRuns.opened;
      order.push('b done');
    });
    await turns();
    later.open();
    await turns();
    // a's call waits: b holds the only slot.
    expect(order).toEqual(['b runs', 'a asks for a call']);
    const c = slots.run(async () => {
      order.push('c runs');
    });
    bRuns.open();
    await turns();
    expect(order).toEqual(['b runs', 'a asks for a call', 'b done', 'a calls']);
    // c waits for the slot a's call holds.
    await turns();
    expect(order).not.toContain('c runs');
    callMayEnd.open();
    await Promise.all([a, b, c]);
    expect(order.slice(4).sort()).toEqual(['a done', 'c runs']);
    expect(slots.activeSteps).toBe(0);
  });

  it('a step that throws gives its slot back', async () => {
    const slots = new CallSlots(1);
    await expect(slots.run(async () => { throw new Error('no'); })).rejects.toThrow('no');
    expect(await slots.run(async () => 'next')).toBe('next');
  });
});

describe('the engine with its slots given back after the funding', () => {
  let ctx: EngineContext;
  let counter: LyingService;
  beforeEach(async () => {
    ctx = await engineContext();
    counter = await lyingService(ctx.sandbox);
    ctx.serviceUrl = counter.url;
  });
  afterEach(async () => {
    await counter.close();
    await ctx.stop();
  });

  it('never has more calls in flight than engine.concurrency, the reads after lost funding answers included; every row paid once', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `SLOT-${String(i + 1).padStart(3, '0')}`);
    // Six fundings take effect and their answers are lost: each row then reads its transaction, holding its slot still.
    // Every call is slow enough for the slots to be full.
    counter.lie(rule('POST', PATHS.fund, loseAnswerAfterCommit(), 6));
    counter.lie({ match: { path: /^\/transactions/ }, act: delay(15) });
    ctx.drop(gbrRowsBatch(ctx.dir, 'slots.csv', ids));
    const report = await ctx.run({ engine: { concurrency: 3 } }, 20_000);
    const batch = report.batches[0]?.batch as string;
    const rows = await ctx.results(batch);
    expect(rows).toHaveLength(30);
    expect(rows.every((row) => row.state === 'paid' || row.state === 'approved' || row.state === 'processing'), JSON.stringify(rows.map((r) => r.state))).toBe(true);
    const debits = debitsPerTransaction(ctx.sandbox);
    expect(debits.size).toBe(30);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);
    const lost = counter.seen.filter((s) => s.lie === 'lost_after_commit');
    expect(lost).toHaveLength(6);
    // Each lost answer was followed by a read of the transaction.
    expect(counter.seen.filter((s) => s.method === 'GET' && PATHS.transaction.test(s.path)).length).toBeGreaterThanOrEqual(6);
    expect(counter.maxInFlight).toBe(3);
  }, 60_000);
});
