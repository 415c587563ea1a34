/**
 * Hostile review of src/engine/call-slots.ts on its own: leaks, double gives,
 * deadlocks when every slot is taken and a released step calls again, and the
 * ordering Pipeline.submit relies on (a failure noted before the slot goes on).
 */
import { describe, expect, it } from 'vitest';
import type { Slot } from '../../src/engine/call-slots.js';
import { CallSlots } from '../../src/engine/call-slots.js';
import { gate, turns } from '../helpers/gates.js';

/** Rejects after `ms`: a deadlock shows as a timeout, not as a hung test. */
function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`deadlock: ${what}`)), ms); })])
    .finally(() => clearTimeout(timer));
}

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('call slots, hostile', () => {
  it('no deadlock: every slot taken by released steps that all call again, with fresh steps queued ahead of them', async () => {
    const slots = new CallSlots(2);
    const done: string[] = [];
    const step = (name: string) => slots.run(async (slot) => {
      await slot.call(async () => { await turns(1); });
      slot.release();
      await turns(2);
      // Called again after release: behind whatever waits; must still get a slot.
      await slot.call(async () => { await turns(1); });
      await slot.call(async () => { await turns(1); });
      done.push(name);
    });
    const all = Array.from({ length: 12 }, (_, i) => step(`s${i}`));
    await within(Promise.all(all), 5_000, 'released steps calling again');
    expect(done).toHaveLength(12);
    expect(slots.activeSteps).toBe(0);
  });

  it('no leak: after releases, calls taken again, throws in calls and throws in steps, all `size` slots are free again', async () => {
    const slots = new CallSlots(3);
    const rnd = random(7);
    let holding = 0;
    let most = 0;
    const held = async (): Promise<void> => {
      holding += 1;
      most = Math.max(most, holding);
      await turns(1 + Math.floor(rnd() * 3));
      holding -= 1;
    };
    const steps = Array.from({ length: 200 }, (_, i) => slots.run(async (slot: Slot) => {
      await slot.call(held);
      if (rnd() < 0.5) {
        slot.release();
        slot.release();
      }
      if (rnd() < 0.3) await slot.call(async () => { await held(); if (rnd() < 0.3) throw new Error(`call ${i}`); }).catch(() => {});
      if (rnd() < 0.2) throw new Error(`step ${i}`);
      await slot.call(held);
    }).catch(() => {}));
    await within(Promise.all(steps), 10_000, 'random steps');
    expect(most).toBeLessThanOrEqual(3);
    expect(slots.activeSteps).toBe(0);
    // Exactly three run at once now, and a fourth waits: nothing was lost, nothing given twice.
    const g = gate();
    const started: number[] = [];
    const probes = [0, 1, 2, 3].map((i) => slots.run(async () => { started.push(i); await g.opened; }));
    await turns(10);
    expect(started).toEqual([0, 1, 2]);
    g.open();
    await Promise.all(probes);
  });

  it('submit\'s pattern: a step failing for good in a call taken again after release is noted before a waiting step starts', async () => {
    // Pipeline.submit: each step first checks `failures`, and its catch pushes the error; the comment there says what can
    // fail after a release is "a call it takes a slot again for". The call's own run gives its slot back in its finally,
    // before the error has reached the step's catch: the step waiting next starts, sees no failure, and sends.
    const slots = new CallSlots(1);
    const failures: unknown[] = [];
    const sent: string[] = [];
    const bMayEnd = gate();
    const submitStep = (body: (slot: Slot) => Promise<void>): Promise<unknown> => slots.run(async (slot) => {
      if (failures.length > 0) return false;
      try {
        await body(slot);
        return true;
      } catch (error) {
        failures.push(error);
        throw error;
      }
    }).catch(() => {});
    const a = submitStep(async (slot) => {
      sent.push('a');
      slot.release();
      // Refused credentials, in a call made after the slot was given back (a few async frames deep, as in steps.ts:
      // fund -> observe -> act -> sendCancel -> slot.call).
      const deeper = async (): Promise<void> => { await slot.call(async () => { throw new Error('401: credentials refused'); }); };
      const deep = async (): Promise<void> => { await deeper(); };
      await deep();
    });
    // b took a's slot at its release; a's call waits behind it, and c (the next row of the window) behind a's call.
    const b = submitStep(async () => { sent.push('b'); await bMayEnd.opened; });
    await turns(10);
    const c = submitStep(async () => { sent.push('c'); });
    await turns(10);
    expect(sent).toEqual(['a', 'b']);
    bMayEnd.open();
    await Promise.all([a, b, c]);
    expect(failures).toHaveLength(1);
    // With a slot held to the step's end (p-limit before), c saw the failure and sent nothing.
    expect(sent, 'c started (and would have sent its create) after a had failed for good').toEqual(['a', 'b']);
  });
});
