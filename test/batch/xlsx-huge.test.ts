/**
 * A huge .xlsx sheet (200,000 rows, written by exceljs's streaming writer as
 * Excel would save it: shared strings, styles, number and date cells) is
 * validated with bounded memory. Validation runs in a child process of its
 * own (the built code: `npm run build`), which reports its RSS before reading
 * and its peak RSS (getrusage), at half the rows and at the end: the peak must
 * stay under a bound, and must not keep growing with the rows.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROWS = 200_000;
/** Peak RSS over the RSS before reading. Measured about 160 MB, most of it exceljs's own garbage (a bare exceljs read of this sheet peaks near 160 MB over node's own); the heap live after a full GC stays near 25 MB throughout. */
const MAX_GROWTH_MB = 200;
/** From half the rows to all of them: what the file's size alone may add (fingerprints, about 33 bytes a row, and the GC's swing). */
const MAX_SECOND_HALF_MB = 40;

const DIST = (path: string): string => fileURLToPath(new URL(`../../dist/src/${path}`, import.meta.url));

const HEADER = [
  'external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount',
  'sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date', 'sender_country_code', 'sender_phone_number',
  'recipient_first_name', 'recipient_last_name', 'recipient_country_code', 'recipient_phone_number',
];

async function writeHugeSheet(file: string): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true, useStyles: true });
  const sheet = workbook.addWorksheet('Payouts');
  sheet.addRow(HEADER).commit();
  const birth = new Date(Date.UTC(1985, 11, 10));
  for (let i = 0; i < ROWS; i++) {
    const row = sheet.addRow([
      `HUGE-${i}`, 'cash', 'USD', 'NGN', 1000 + (i % 5000) / 100,
      `SND-${i % 5000}`, 'person', 'Ada', `Lovelace ${i % 5000}`, birth, 'GBR', '+447400123456',
      `Wole ${i}`, 'Soyinka', 'NGA', `+234803${1_000_000 + i}`,
    ]);
    row.getCell(10).numFmt = 'yyyy-mm-dd';
    row.commit();
  }
  sheet.commit();
  await workbook.commit();
}

/** Validates in a fresh process and reports the figures, in MB. */
function measure(file: string): Promise<{ rows: number; valid: number; errors: unknown[]; beforeMb: number; peakHalfMb: number; peakMb: number; seconds: number }> {
  const script = `
    const { validateFile } = await import(${JSON.stringify(DIST('batch/validate-file.js'))});
    const { readerOptions, ruleOptions } = await import(${JSON.stringify(DIST('batch/batch-options.js'))});
    const { configSchema } = await import(${JSON.stringify(DIST('config/config.js'))});
    const batch = configSchema.parse({}).batch;
    const mb = (bytes) => Math.round(bytes / 1048576);
    const peak = () => mb(process.resourceUsage().maxRSS * 1024);
    const beforeMb = mb(process.memoryUsage().rss);
    const started = Date.now();
    let seen = 0;
    let peakHalfMb = 0;
    const report = await validateFile(process.argv[1], {
      reader: readerOptions(batch), rules: ruleOptions(batch, { now: () => Date.parse('2026-11-21T00:00:00Z') }), maxReportedIssues: 10,
    }, { row() { seen += 1; if (seen === ${ROWS / 2}) peakHalfMb = peak(); } });
    process.stdout.write(JSON.stringify({ rows: report.rows, valid: report.valid, errors: report.errors, beforeMb, peakHalfMb, peakMb: peak(), seconds: (Date.now() - started) / 1000 }));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, file]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`exit ${code}: ${stderr}`))));
  });
}

describe('a huge .xlsx sheet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-xlsx-huge-'));
  const file = join(dir, 'huge.xlsx');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeAll(async () => {
    if (!existsSync(DIST('batch/xlsx-reader.js'))) throw new Error('the built code is missing: run `npm run build` first (npm test does)');
    await writeHugeSheet(file);
  }, 120_000);

  it(`validates ${ROWS.toLocaleString('en')} rows streamed, with bounded memory`, async () => {
    const result = await measure(file);
    const growth = result.peakMb - result.beforeMb;
    console.log(`xlsx ${ROWS} rows (${Math.round(statSync(file).size / 1048576)} MB file): ${result.seconds} s; RSS ${result.beforeMb} MB before reading, peak ${result.peakHalfMb} MB at half the rows, ${result.peakMb} MB at the end: growth ${growth} MB (bound ${MAX_GROWTH_MB} MB)`);
    expect(result).toMatchObject({ rows: ROWS, valid: ROWS, errors: [] });
    expect(growth).toBeLessThan(MAX_GROWTH_MB);
    expect(result.peakMb - result.peakHalfMb).toBeLessThan(MAX_SECOND_HALF_MB);
  }, 180_000);
});
