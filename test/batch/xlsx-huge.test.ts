/**
 * A huge .xlsx sheet (100,000 rows, written as Excel saves a workbook: shared
 * strings, styles, number and date cells; bench/generate-xlsx.ts) is validated
 * streamed, in a child process of its own (the built code: `npm run build`,
 * bench/xlsx-worker.ts), which reports its RSS before reading and its peak RSS
 * at half the rows and at the end. Generous ceilings only, that a leak of the
 * rows would break (a kilobyte a row held is 50 MB in the second half): the
 * figures themselves, at 200,000 rows, are bench:validate's (docs/performance.md).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePayoutSheet } from '../../bench/generate-xlsx.js';
import { measureXlsx } from '../../bench/validate-xlsx.js';

const ROWS = 100_000;
/** Peak RSS over the RSS before reading: most of it exceljs's own garbage (about 160 MB measured at 200,000 rows). */
const MAX_GROWTH_MB = 200;
/** From half the rows to all of them: what the file's size alone may add (fingerprints, about 33 bytes a row, and the GC's swing). */
const MAX_SECOND_HALF_MB = 40;

const WORKER = fileURLToPath(new URL('../../dist/bench/xlsx-worker.js', import.meta.url));

describe('a huge .xlsx sheet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-xlsx-huge-'));
  const file = join(dir, 'huge.xlsx');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeAll(async () => {
    if (!existsSync(WORKER)) throw new Error('the built code is missing: run `npm run build` first (npm test does)');
    await writePayoutSheet(file, ROWS);
  }, 120_000);

  it(`validates ${ROWS.toLocaleString('en')} rows streamed, with bounded memory`, async () => {
    const result = await measureXlsx(WORKER, file, ROWS);
    const growth = result.peakMb - result.beforeMb;
    console.log(`xlsx ${ROWS} rows (${Math.round(statSync(file).size / 1048576)} MB file): ${result.seconds.toFixed(1)} s; RSS ${result.beforeMb} MB before reading, peak ${result.peakHalfMb} MB at half the rows, ${result.peakMb} MB at the end: growth ${growth} MB (ceiling ${MAX_GROWTH_MB} MB)`);
    expect(result).toMatchObject({ rows: ROWS, valid: ROWS, errors: [] });
    expect(growth).toBeLessThan(MAX_GROWTH_MB);
    expect(result.peakMb - result.peakHalfMb).toBeLessThan(MAX_SECOND_HALF_MB);
  }, 180_000);
});
