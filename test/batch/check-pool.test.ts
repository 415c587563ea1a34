/**
 * The checkers of a file's pieces: worker threads, this thread, or both give
 * the same pieces back, in the order asked, as checking each on this thread;
 * a worker that fails fails the pieces it was given, and those after.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateBatch } from '../../bench/generate-batch.js';
import { readerOptions, ruleOptions } from '../../src/batch/batch-options.js';
import { CheckPool } from '../../src/batch/check-pool.js';
import { planColumns } from '../../src/batch/columns.js';
import type { CheckedSegment, SegmentTask } from '../../src/batch/segment-check.js';
import { checkSegment } from '../../src/batch/segment-check.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';

const script = fileURLToPath(new URL('../../dist/src/batch/check-worker.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'paybatch-check-pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The generated batch's rows cut into pieces of `rowsEach` records. */
async function pieces(rows: number, rowsEach: number): Promise<SegmentTask[]> {
  const file = join(dir, `batch-${rows}.csv`);
  await generateBatch(file, rows);
  const [header, ...lines] = readFileSync(file, 'utf8').trimEnd().split('\n');
  const batch = configSchema.parse({}).batch;
  const reader = readerOptions(batch);
  const shared = {
    delimiter: ',' as const, lineEnd: '\n' as const, columns: planColumns((header as string).split(','), reader.columnMapping, reader.maxColumns),
    rules: ruleOptions(batch, systemClock), maxRowCharacters: reader.maxRowCharacters, keepRows: false,
  };
  const tasks: SegmentTask[] = [];
  for (let at = 0; at < lines.length; at += rowsEach) {
    tasks.push({ ...shared, index: tasks.length, text: `${lines.slice(at, at + rowsEach).join('\n')}\n`, startLine: at + 2 });
  }
  return tasks;
}

/** What matters of a checked piece, comparable across threads (typed arrays as plain ones). */
const plain = (checked: CheckedSegment): unknown => ({ ...checked, lines: Array.from(checked.lines), prints: Array.from(checked.prints), valid: Array.from(checked.valid) });

describe('the checkers of a file\'s pieces', () => {
  it('give back what checking on this thread gives, in order, from workers, this thread, or both', async () => {
    const tasks = await pieces(6_000, 250);
    const expected = tasks.map((task) => plain(checkSegment(task)));
    for (const [workers, thisThread] of [[1, false], [0, true], [1, true], [2, true]] as const) {
      const pool = new CheckPool(script, workers, thisThread);
      try {
        expect(pool.checkers).toBe(workers + (thisThread ? 1 : 0));
        // Every worker ready first: each is given two pieces at once, and this thread one, from the start.
        await pool.ready;
        const checked = await Promise.all(tasks.map((task) => pool.check(task)));
        expect(checked.map(plain), `${workers} workers, this thread ${thisThread}`).toEqual(expected);
        if (!thisThread) expect(pool.checkedHere).toBe(0);
        else if (workers === 0) expect(pool.checkedHere).toBe(tasks.length);
        else expect(pool.checkedHere).toBeGreaterThan(0);
        if (thisThread && workers > 0) expect(pool.checkedHere).toBeLessThan(tasks.length - workers);
      } finally {
        await pool.close();
      }
    }
  });

  /** A pool of one worker running `body`, given every piece: how each settled, and `after` before the pool closes. */
  async function settledWith(name: string, body: string, after: (pool: CheckPool, tasks: SegmentTask[]) => Promise<void> = async () => {}): Promise<PromiseSettledResult<CheckedSegment>[]> {
    const tasks = await pieces(600, 100);
    const script = join(dir, name);
    writeFileSync(script, `import { parentPort } from 'node:worker_threads';\n${body}\nparentPort.postMessage({ ready: true });\n`);
    const pool = new CheckPool(script, 1, false);
    try {
      const settled = await Promise.allSettled(tasks.map((task) => pool.check(task)));
      await after(pool, tasks);
      return settled;
    } finally {
      await pool.close();
    }
  }

  it('fails the pieces given to a worker that fails, and every piece after', async () => {
    const settled = await settledWith('broken-worker.mjs', "parentPort.on('message', () => { throw new Error('the worker broke'); });", async (pool, tasks) => {
      await expect(pool.check(tasks[0] as SegmentTask)).rejects.toThrow(/the worker broke/);
    });
    expect(settled.every((s) => s.status === 'rejected' && /the worker broke/.test(String(s.reason)))).toBe(true);
  });

  it('is ready, and fails its pieces, when a worker fails or ends before it says it is ready', async () => {
    for (const [name, body, why] of [
      ['failing-at-start.mjs', "throw new Error('no modules');", /no modules/],
      ['leaving-at-start.mjs', 'process.exit(4);', /stopped \(exit code 4\)/],
    ] as const) {
      const script = join(dir, name);
      writeFileSync(script, `${body}\n`);
      const pool = new CheckPool(script, 1, false);
      try {
        // Intake waits for this before reading: it waited for ever.
        await pool.ready;
        await expect(pool.check((await pieces(10, 10))[0] as SegmentTask)).rejects.toThrow(why);
      } finally {
        await pool.close();
      }
    }
  }, 20_000);

  it('fails the pieces of a worker that ends without an error, instead of waiting for them forever', async () => {
    const settled = await settledWith('leaving-worker.mjs', "parentPort.on('message', () => process.exit(3));");
    expect(settled.every((s) => s.status === 'rejected' && /stopped \(exit code 3\)/.test(String(s.reason)))).toBe(true);
  }, 20_000);

  it('ends a worker only once it has loaded its modules, when the pool is closed at once', async () => {
    // A thread ended while V8 runs a module that awaits aborts the whole process (see check-pool.ts): the check worker
    // awaits its modules. This one takes its time over them, then leaves a mark; ended early, it never would.
    const mark = join(dir, 'loaded.mark');
    const script = join(dir, 'slow-to-load.mjs');
    writeFileSync(script, `import { writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
await new Promise((resolve) => setTimeout(resolve, 150));
writeFileSync(${JSON.stringify(mark)}, '');
parentPort.postMessage({ ready: true });
`);
    const pool = new CheckPool(script, 2, true);
    await pool.close();
    expect(existsSync(mark)).toBe(true);
  });
});
