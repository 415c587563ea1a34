/**
 * `npm run bench:validate`: generates a batch of BENCH_ROWS rows (default
 * 1,000,000) across all corridors, from BENCH_SENDERS senders (default 5,000), then measures, each in its own process:
 * csv-parse alone on it (with the reader's options), and paybatch's validation.
 * Prints rows/s of both, their ratio (goal: at least 0.5) and peak RSS (goal:
 * under 200 MB: validation streams).
 *
 * This machine's speed drifts by a fifth between runs, so the two measurements
 * alternate for BENCH_ROUNDS rounds (default 3) and the best of each is compared;
 * every round is printed too.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateBatch } from './generate-batch.js';

const rows = Number(process.env.BENCH_ROWS ?? 1_000_000);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const senders = Math.max(1, Number(process.env.BENCH_SENDERS ?? 5000));
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
  await generateBatch(file, rows, senders);
  const size = statSync(file).size;
  console.log(`bench:validate  ${rows} rows across all corridors, ${senders} senders, ${(size / 1e6).toFixed(0)} MB (generated in ${((performance.now() - generating) / 1000).toFixed(1)} s)`);
  const runs: { parse: Measured; validate: Measured }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const run = { parse: measure('parse', file), validate: measure('validate', file) };
    if (run.parse.rows !== rows || run.validate.rows !== rows) throw new Error(`row counts differ: generated ${rows}, parsed ${run.parse.rows}, validated ${run.validate.rows}`);
    console.log(`  round ${round}: csv-parse ${run.parse.seconds.toFixed(1)} s, validate ${run.validate.seconds.toFixed(1)} s (peak RSS ${run.validate.maxRssMb} MB)`);
    runs.push(run);
  }
  const best = (pick: (r: (typeof runs)[number]) => Measured): Measured => runs.map(pick).reduce((a, b) => (b.seconds < a.seconds ? b : a));
  const parsed = best((r) => r.parse);
  const validated = best((r) => r.validate);
  const peakRss = Math.max(...runs.map((r) => r.validate.maxRssMb));
  const parseRate = parsed.rows / parsed.seconds;
  const validateRate = validated.rows / validated.seconds;
  const ratio = validateRate / parseRate;
  console.log(`  csv-parse alone      ${parseRate.toFixed(0).padStart(8)} rows/s   (best of ${rounds}: ${parsed.seconds.toFixed(1)} s, peak RSS ${parsed.maxRssMb} MB)`);
  console.log(`  paybatch validate    ${validateRate.toFixed(0).padStart(8)} rows/s   (best of ${rounds}: ${validated.seconds.toFixed(1)} s, ${validated.invalid} invalid rows found)`);
  console.log(`  ratio                ${ratio.toFixed(2)}   (goal: at least 0.50)`);
  console.log(`  peak RSS             ${peakRss} MB   (the highest of the validate rounds; goal: under 200 MB)`);
  if (ratio < 0.5 || peakRss >= 200) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
