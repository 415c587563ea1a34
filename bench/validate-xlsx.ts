/**
 * The .xlsx part of `bench:validate`: a sheet of BENCH_XLSX_ROWS payouts
 * (default 200,000; generate-xlsx.ts) validated streamed, each round in a
 * process of its own (xlsx-worker.ts). Goals, the bounds the test of a huge
 * sheet held before they were measured here: the peak RSS at most 200 MB over
 * the RSS before reading, and at most 40 MB more at the end than at half the
 * rows (memory that grows with the rows would be a leak).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { writePayoutSheet } from './generate-xlsx.js';

/** What xlsx-worker.ts prints: rows read and valid, the first errors, RSS figures in MB, the seconds taken. */
export interface XlsxMeasured { rows: number; valid: number; errors: unknown[]; beforeMb: number; peakHalfMb: number; peakMb: number; seconds: number }

/** Validates `file` (of `rows` rows) in a process of its own, through the built xlsx-worker.js at `worker`. */
export async function measureXlsx(worker: string, file: string, rows: number): Promise<XlsxMeasured> {
  const { stdout } = await promisify(execFile)(process.execPath, [worker, file, String(rows)], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as XlsxMeasured;
}

const worker = fileURLToPath(new URL('./xlsx-worker.js', import.meta.url));

const GROWTH_MB = 200;
const SECOND_HALF_MB = 40;

/** Runs the .xlsx benchmark and prints it; true when its goals are met. */
export async function benchXlsx(rows: number, rounds: number): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-xlsx-'));
  try {
    const file = join(dir, 'payouts.xlsx');
    const generating = performance.now();
    await writePayoutSheet(file, rows);
    console.log(`bench:validate  .xlsx of ${rows} payouts (shared strings, styles, number and date cells), ${(statSync(file).size / 1e6).toFixed(0)} MB (generated in ${((performance.now() - generating) / 1000).toFixed(1)} s)`);
    const runs: XlsxMeasured[] = [];
    for (let round = 1; round <= rounds; round++) {
      const run = await measureXlsx(worker, file, rows);
      if (run.rows !== rows || run.valid !== rows) throw new Error(`generated ${rows} valid rows; read ${run.rows}, ${run.valid} valid: ${JSON.stringify(run.errors.slice(0, 3))}`);
      console.log(`  round ${round}: ${run.seconds.toFixed(2)} s, RSS ${run.beforeMb} MB before reading, peak ${run.peakHalfMb} MB at half the rows, ${run.peakMb} MB at the end`);
      runs.push(run);
    }
    const fastest = runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const growth = Math.max(...runs.map((r) => r.peakMb - r.beforeMb));
    const secondHalf = Math.max(...runs.map((r) => r.peakMb - r.peakHalfMb));
    const peak = Math.max(...runs.map((r) => r.peakMb));
    console.log(`  .xlsx validate       ${(rows / fastest.seconds).toFixed(0).padStart(8)} rows/s   (best of ${rounds}: ${fastest.seconds.toFixed(2)} s; peak RSS ${peak} MB)`);
    console.log(`  peak over before     ${growth} MB   (the highest of the rounds; goal: at most ${GROWTH_MB} MB: ${growth <= GROWTH_MB ? 'met' : 'NOT MET'})`);
    console.log(`  second half          ${secondHalf} MB   (peak at the end over the peak at half the rows; goal: at most ${SECOND_HALF_MB} MB: ${secondHalf <= SECOND_HALF_MB ? 'met' : 'NOT MET'})`);
    return growth <= GROWTH_MB && secondHalf <= SECOND_HALF_MB;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
