/**
 * A worker's call slots when the database fails to take one back (its return
 * lost with the connection): the slot is returned again before the next is
 * taken, and never swept meanwhile, instead of staying taken by a call long
 * ended. With every slot so lost, a step waiting for one waited for good. A
 * slot is kept for the next step here for 20 ms before it is given back.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { SharedWork } from '../../src/engine/shared-work.js';
import type { SharedWorkStore, WorkerRecord } from '../../src/store/port.js';

/** The call slots of a database, in memory; its returns fail while `down`. */
function slotStore(size: number): { store: SharedWorkStore; holder: (string | null)[]; down: { now: boolean }; swept: number[][] } {
  const holder: (string | null)[] = Array.from({ length: size }, () => null);
  const down = { now: false };
  const swept: number[][] = [];
  let me: WorkerRecord | undefined;
  const store = {
    joinWorkers: async (worker: WorkerRecord) => {
      me = worker;
      return null;
    },
    workers: async () => (me ? [me] : []),
    renewWorker: async () => true,
    leaveWorkers: async () => {},
    takeCallSlot: async (worker: string, slots: number) => {
      const free = holder.findIndex((h, i) => i < slots && h === null);
      if (free < 0) return null;
      holder[free] = worker;
      return free;
    },
    returnCallSlot: async (slot: number, worker: string) => {
      if (down.now) throw new Error('the database cannot be reached (Connection terminated unexpectedly)');
      if (holder[slot] === worker) holder[slot] = null;
    },
    sweepOwnClaims: async (_worker: string, _before: number, _working: readonly string[], inUse: readonly number[]) => {
      swept.push([...inUse].sort());
      return { rows: 0, slots: 0 };
    },
  } as unknown as SharedWorkStore;
  return { store, holder, down, swept };
}

describe('SharedWork call slots', () => {
  afterEach(() => vi.useRealTimers());

  it('a slot whose return failed is returned before the next is taken, and kept out of the sweep until then', async () => {
    const { store, holder, down, swept } = slotStore(2);
    const work = await SharedWork.join(store, new ManualClock(1_000), { name: 'w1', leaseMs: 30_000, serviceConcurrency: 2 });
    const signal = new AbortController().signal;
    down.now = true;
    expect(await work.withCallSlot(signal, async () => 'a')).toBe('a');
    await work.giveBackKept();
    expect(await work.withCallSlot(signal, async () => 'b')).toBe('b');
    await work.giveBackKept();
    // Both returns were lost: the database still has both slots taken by calls that ended.
    expect(holder).toEqual(['w1', 'w1']);
    await work.sweepIdle([], 60_000);
    expect(swept.at(-1)).toEqual([0, 1]);
    down.now = false;
    // Taken again at once, not after a sweep: the lost returns are made first.
    expect(await work.withCallSlot(signal, async () => 'c')).toBe('c');
    await work.giveBackKept();
    expect(holder).toEqual([null, null]);
    await work.sweepIdle([], 60_000);
    expect(swept.at(-1)).toEqual([]);
    await work.leave();
  });

  it('a slot is kept for the next step here, taken from the database once, kept out of the sweep, and given back 20 ms after the last step', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { store, holder, swept } = slotStore(2);
    let takes = 0;
    const take = store.takeCallSlot.bind(store);
    store.takeCallSlot = async (...args) => {
      takes += 1;
      return take(...args);
    };
    const work = await SharedWork.join(store, new ManualClock(1_000), { name: 'w1', leaseMs: 30_000, serviceConcurrency: 2 });
    const signal = new AbortController().signal;
    for (const step of ['a', 'b', 'c']) expect(await work.withCallSlot(signal, async () => step)).toBe(step);
    expect(takes).toBe(1);
    expect(holder).toEqual(['w1', null]);
    // Two steps at once: the kept slot and one more.
    await Promise.all([work.withCallSlot(signal, async () => holder.filter(Boolean).length), work.withCallSlot(signal, async () => 0)]);
    expect(takes).toBe(2);
    await work.sweepIdle([], 60_000);
    expect(swept.at(-1)).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(19);
    expect(holder).toEqual(['w1', 'w1']);
    await vi.advanceTimersByTimeAsync(1);
    expect(holder).toEqual([null, null]);
    await work.sweepIdle([], 60_000);
    expect(swept.at(-1)).toEqual([]);
    await work.leave();
  });
});
