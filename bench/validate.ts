/**
 * `npm run bench:validate`: generates a batch of BENCH_ROWS rows (default
 * 300,000) across all corridors, from BENCH_SENDERS senders (default 5,000),
 * and the same number of rows with every sender distinct; then measures, each
 * in its own process: csv-parse alone on it (one thread, with the reader's
 * options), and paybatch's validation (parsed and checked on every core).
 * Prints rows/s of both, their ratio (goal: at least 1.0), peak RSS (goal:
 * under 150 MB) and the all-distinct-senders rate against the first (goal:
 * within 20%).
 *
 * This machine's speed drifts by a fifth between runs, so the two measurements
 * alternate for BENCH_ROUNDS rounds (default 3) and the best of each is compared;
 * every round is printed too.
 *
 * Then a pain.001 of BENCH_ISO_ROWS transfers (default 1,000,000; 0 leaves it
 * out) against the same rows as CSV (validate-iso.ts; goals: within 2x the
 * CSV's time, under 150 MB). BENCH_ROWS=0 runs that part alone.
 *
 * Then a .xlsx of BENCH_XLSX_ROWS payouts (default 200,000; 0 leaves it out):
 * its memory as it is read (validate-xlsx.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateBatch } from './generate-batch.js';
import { benchPain001 } from './validate-iso.js';
import { benchXlsx } from './validate-xlsx.js';
import { checkers } from '../src/batch/parallel-check.js';

const rows = Number(process.env.BENCH_ROWS ?? 300_000);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const senders = Math.max(1, Number(process.env.BENCH_SENDERS ?? 5000));
const isoRows = Number(process.env.BENCH_ISO_ROWS ?? 1_000_000);
const xlsxRows = Number(process.env.BENCH_XLSX_ROWS ?? 200_000);
const worker = fileURLToPath(new URL('./validate-worker.js', import.meta.url));

interface Measured {
  rows: number;
  invalid: number;
  seconds: number;
  maxRssMb: number;
}

const measure = (mode: string, file: string): Measured => JSON.parse(execFileSync(process.execPath, [worker, mode, file], { encoding: 'utf8' })) as Measured;

if (rows > 0) {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-validate-'));
  try {
    const file = join(dir, 'batch.csv');
    const distinct = join(dir, 'distinct.csv');
    const generating = performance.now();
    await generateBatch(file, rows, senders);
    await generateBatch(distinct, rows, rows);
    const size = statSync(file).size;
    console.log(`bench:validate  ${rows} rows across all corridors, ${senders} senders (and a second file with ${rows}, all distinct), ${(size / 1e6).toFixed(0)} MB (generated in ${((performance.now() - generating) / 1000).toFixed(1)} s)`);
    const runs: { parse: Measured; validate: Measured; distinct: Measured }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const run = { parse: measure('parse', file), validate: measure('validate', file), distinct: measure('validate', distinct) };
      if (run.parse.rows !== rows || run.validate.rows !== rows || run.distinct.rows !== rows) throw new Error(`row counts differ: generated ${rows}, parsed ${run.parse.rows}, validated ${run.validate.rows} and ${run.distinct.rows}`);
      console.log(`  round ${round}: csv-parse ${run.parse.seconds.toFixed(2)} s, validate ${run.validate.seconds.toFixed(2)} s (peak RSS ${run.validate.maxRssMb} MB), all senders distinct ${run.distinct.seconds.toFixed(2)} s (peak RSS ${run.distinct.maxRssMb} MB)`);
      runs.push(run);
    }
    const best = (pick: (r: (typeof runs)[number]) => Measured): Measured => runs.map(pick).reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const parsed = best((r) => r.parse);
    const validated = best((r) => r.validate);
    const distinctRun = best((r) => r.distinct);
    const peakRss = Math.max(...runs.flatMap((r) => [r.validate.maxRssMb, r.distinct.maxRssMb]));
    const parseRate = parsed.rows / parsed.seconds;
    const validateRate = validated.rows / validated.seconds;
    const distinctRate = distinctRun.rows / distinctRun.seconds;
    const ratio = validateRate / parseRate;
    const distinctRatio = distinctRate / validateRate;
    console.log(`  csv-parse alone      ${parseRate.toFixed(0).padStart(8)} rows/s   (best of ${rounds}: ${parsed.seconds.toFixed(2)} s, peak RSS ${parsed.maxRssMb} MB)`);
    const who = checkers();
    console.log(`  paybatch validate    ${validateRate.toFixed(0).padStart(8)} rows/s   (best of ${rounds}: ${validated.seconds.toFixed(2)} s, ${validated.invalid} invalid rows found, ${who.workers} worker thread(s)${who.thisThread ? ' and the main thread' : ''} checking)`);
    console.log(`  ratio                ${ratio.toFixed(2)}   (goal: at least 1.00: ${ratio >= 1 ? 'met' : 'NOT MET'})`);
    console.log(`  peak RSS             ${peakRss} MB   (the highest of the validate rounds; goal: under 150 MB: ${peakRss < 150 ? 'met' : 'NOT MET'})`);
    console.log(`  all senders distinct ${distinctRate.toFixed(0).padStart(8)} rows/s   ratio to ${senders} senders ${distinctRatio.toFixed(2)}  (goal: at least 0.80: ${distinctRatio >= 0.8 ? 'met' : 'NOT MET'})`);
    if (ratio < 1 || peakRss >= 150 || distinctRatio < 0.8) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
if (isoRows > 0 && !(await benchPain001(isoRows, rounds))) process.exitCode = 1;
if (xlsxRows > 0 && !(await benchXlsx(xlsxRows, rounds))) process.exitCode = 1;
