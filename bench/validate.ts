/**
 * `npm run bench:validate`: generates a batch of BENCH_ROWS rows (default
 * 1,000,000) across all corridors, then measures, each in its own process:
 * csv-parse alone on it (with the reader's options), and paybatch's validation.
 * Prints rows/s of both, their ratio (goal: at least 0.5) and peak RSS (goal:
 * under 200 MB: validation streams).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateBatch } from './generate-batch.js';

const rows = Number(process.env.BENCH_ROWS ?? 1_000_000);
const worker = fileURLToPath(new URL('./validate-worker.js', import.meta.url));

interface Measured {
  rows: number;
  invalid: number;
  seconds: number;
  maxRssMb: number;
}

const measure = (mode: string, file: string): Measured => JSON.parse(execFileSync(process.execPath, [worker, mode, file], { encoding: 'utf8' })) as Measured;

const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-validate-'));
try {
  const file = join(dir, 'batch.csv');
  const generating = performance.now();
  await generateBatch(file, rows);
  const size = statSync(file).size;
  console.log(`bench:validate  ${rows} rows across all corridors, ${(size / 1e6).toFixed(0)} MB (generated in ${((performance.now() - generating) / 1000).toFixed(1)} s)`);
  const parsed = measure('parse', file);
  const validated = measure('validate', file);
  if (parsed.rows !== rows || validated.rows !== rows) throw new Error(`row counts differ: generated ${rows}, parsed ${parsed.rows}, validated ${validated.rows}`);
  const parseRate = parsed.rows / parsed.seconds;
  const validateRate = validated.rows / validated.seconds;
  const ratio = validateRate / parseRate;
  console.log(`  csv-parse alone      ${parseRate.toFixed(0).padStart(8)} rows/s   (${parsed.seconds.toFixed(1)} s, peak RSS ${parsed.maxRssMb} MB)`);
  console.log(`  paybatch validate    ${validateRate.toFixed(0).padStart(8)} rows/s   (${validated.seconds.toFixed(1)} s, peak RSS ${validated.maxRssMb} MB, ${validated.invalid} invalid rows found)`);
  console.log(`  ratio                ${ratio.toFixed(2)}   (goal: at least 0.50)`);
  console.log(`  peak RSS             ${validated.maxRssMb} MB   (goal: under 200 MB)`);
  if (ratio < 0.5 || validated.maxRssMb >= 200) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
