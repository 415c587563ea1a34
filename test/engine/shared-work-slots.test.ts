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

/** The workers of a database with one worker, the one that joins: its lease always renewed. */
function oneWorker(): Pick<SharedWorkStore, 'joinWorkers' | 'workers' | 'renewWorker' | 'leaveWorkers'> {
  let me: WorkerRecord | undefined;
  return {
    joinWorkers: async (worker: WorkerRecord) => {
      me = worker;
      return null;
    },
    workers: async () => (me ? [me] : []),
    renewWorker: async () => true,
    leaveWorkers: async () => {},
  };
}

/** The call slots of a database, in memory; its returns fail while `down`. */
function slotStore(size: number): { store: SharedWorkStore; holder: (string | null)[]; down: { now: boolean }; swept: number[][] } {
  const holder: (string | null)[] = Array.from({ length: size }, () => null);
  const down = { now: false };
  const swept: number[][] = [];
  const store = {
    ...oneWorker(),
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
    // Taken a second ago or more: given back when its step ends, not kept (another worker may be waiting for it).
    const clock = new ManualClock(5_000);
    const busy = await SharedWork.join(store, clock, { name: 'w2', leaseMs: 30_000, serviceConcurrency: 2 });
    await busy.withCallSlot(signal, async () => {});
    await busy.withCallSlot(signal, async () => clock.advance(999));
    expect(holder).toEqual(['w2', null]);
    await busy.withCallSlot(signal, async () => clock.advance(1));
    await new Promise((resolve) => setImmediate(resolve));
    expect(holder).toEqual([null, null]);
    await busy.leave();
    await work.leave();
    // Left: no call starts.
    expect(await work.withCallSlot(signal, async () => 'after leaving')).toBeNull();
  });

  /** One slot, as PostgreSQL keeps it: a return frees the take it names only; its answer can be held back, or lost. */
  function markedSlot(): { store: SharedWorkStore; table: { worker: string | null; takenAt: number | null }; answer: { held: Promise<void> | null; lost: number; refused: number }; applied: number[] } {
    const table = { worker: null as string | null, takenAt: null as number | null };
    const answer = { held: null as Promise<void> | null, lost: 0, refused: 0 };
    const applied: number[] = [];
    const store = {
      ...oneWorker(),
      takeCallSlot: async (worker: string, _slots: number, now: number) => {
        if (table.worker !== null) return null;
        Object.assign(table, { worker, takenAt: now });
        return 0;
      },
      returnCallSlot: async (_slot: number, worker: string, takenAt: number) => {
        if (answer.refused > 0) {
          answer.refused -= 1;
          throw new Error('the database cannot be reached (Connection terminated unexpectedly)');
        }
        if (table.worker === worker && table.takenAt === takenAt) Object.assign(table, { worker: null, takenAt: null });
        applied.push(takenAt);
        if (answer.held) await answer.held;
        if (answer.lost > 0) {
          answer.lost -= 1;
          throw new Error('the database cannot be reached (Connection terminated unexpectedly)');
        }
      },
      sweepOwnClaims: async (worker: string, before: number, _working: readonly string[], inUse: readonly number[]) => {
        const freed = table.worker === worker && (table.takenAt ?? 0) < before && !inUse.includes(0);
        if (freed) Object.assign(table, { worker: null, takenAt: null });
        return { rows: 0, slots: freed ? 1 : 0 };
      },
    } as unknown as SharedWorkStore;
    return { store, table, answer, applied };
  }

  it('a slot taken again while its last return is still unanswered stays held for its call, past the sweep', async () => {
    const { store, table, answer } = markedSlot();
    const clock = new ManualClock(1_000);
    const work = await SharedWork.join(store, clock, { name: 'w1', leaseMs: 600_000, serviceConcurrency: 1 });
    const signal = new AbortController().signal;
    await work.withCallSlot(signal, async () => {});
    let answerNow = (): void => {};
    answer.held = new Promise((resolve) => (answerNow = resolve));
    // The kept slot is given back: applied at once, its answer held back.
    const givingBack = work.giveBackKept();
    await new Promise((resolve) => setImmediate(resolve));
    expect(table.worker).toBeNull();
    answer.held = null;
    await work.withCallSlot(signal, async () => {
      expect(table.worker).toBe('w1');
      // The old return is answered in the middle of the new call, which then outlasts the idle claims' time.
      answerNow();
      await givingBack;
      clock.advance(61_000);
      expect(await work.sweepIdle([], 60_000)).toEqual({ rows: 0, slots: 0 });
      expect(table.worker).toBe('w1');
    });
    await work.giveBackKept();
    expect(table.worker).toBeNull();
    await work.leave();
  });

  it('a return applied whose answer was lost, made again once the slot is taken again, frees nothing in use', async () => {
    const { store, table, answer, applied } = markedSlot();
    const work = await SharedWork.join(store, new ManualClock(1_000), { name: 'w1', leaseMs: 600_000, serviceConcurrency: 1 });
    await work.withCallSlot(new AbortController().signal, async () => {});
    // Applied, its answer lost: the worker takes it for unreturned.
    answer.lost = 1;
    await work.giveBackKept();
    expect(table.worker).toBeNull();
    // Its next return fails before it is applied; the slot is taken again meanwhile, for a call.
    answer.refused = 1;
    const first = applied[0] as number;
    await work.withCallSlot(new AbortController().signal, async () => {
      const second = table.takenAt;
      expect(second).not.toBe(first);
      // Another step of the worker makes the lost return again before it looks for a slot (none is free: it gives up).
      const other = new AbortController();
      const waiting = work.withCallSlot(other.signal, async () => 'never');
      while (applied.length < 2) await new Promise((resolve) => setImmediate(resolve));
      expect(applied[1]).toBe(first);
      expect(table).toEqual({ worker: 'w1', takenAt: second });
      other.abort();
      expect(await waiting).toBeNull();
    });
    await work.leave();
  });
});
