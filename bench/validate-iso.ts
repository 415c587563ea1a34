/**
 * The pain.001 part of `bench:validate`: BENCH_ISO_ROWS credit transfers
 * (default 1,000,000) as a pain.001.001.09 and the same rows as CSV
 * (generate-pain001.ts), each validated by paybatch in its own process as
 * validate-worker.ts does, alternating for the given rounds; the best of each
 * is compared. Goals: the pain.001 within 2x the CSV's time, under 150 MB.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ISO20022, generatePain001 } from './generate-pain001.js';

const worker = fileURLToPath(new URL('./validate-worker.js', import.meta.url));

interface Measured {
  rows: number;
  invalid: number;
  seconds: number;
  maxRssMb: number;
}

const measure = (file: string): Measured => JSON.parse(execFileSync(process.execPath, [worker, 'validate', file, JSON.stringify({ iso20022: BENCH_ISO20022 })], { encoding: 'utf8' })) as Measured;

/** Runs the pain.001 benchmark and prints it; true when both goals are met. */
export async function benchPain001(rows: number, rounds: number): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-pain001-'));
  try {
    const xml = join(dir, 'batch.xml');
    const csv = join(dir, 'batch.csv');
    const generating = performance.now();
    await generatePain001(xml, csv, rows);
    console.log(`bench:validate  pain.001.001.09 of ${rows} transfers, ${(statSync(xml).size / 1e6).toFixed(0)} MB, and the same rows as CSV, ${(statSync(csv).size / 1e6).toFixed(0)} MB (generated in ${((performance.now() - generating) / 1000).toFixed(1)} s)`);
    const runs: { csv: Measured; xml: Measured }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const run = { csv: measure(csv), xml: measure(xml) };
      if (run.csv.rows !== rows || run.xml.rows !== rows) throw new Error(`row counts differ: generated ${rows}, CSV ${run.csv.rows}, pain.001 ${run.xml.rows}`);
      if (run.csv.invalid !== run.xml.invalid) throw new Error(`the same rows, judged differently: ${run.csv.invalid} invalid in the CSV, ${run.xml.invalid} in the pain.001`);
      console.log(`  round ${round}: CSV ${run.csv.seconds.toFixed(2)} s (peak RSS ${run.csv.maxRssMb} MB), pain.001 ${run.xml.seconds.toFixed(2)} s (peak RSS ${run.xml.maxRssMb} MB), ${run.xml.invalid} invalid rows in each`);
      runs.push(run);
    }
    const best = (pick: (r: (typeof runs)[number]) => Measured): Measured => runs.map(pick).reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const csvBest = best((r) => r.csv);
    const xmlBest = best((r) => r.xml);
    const ratio = xmlBest.seconds / csvBest.seconds;
    const peakRss = Math.max(...runs.map((r) => r.xml.maxRssMb));
    console.log(`  CSV                  ${(rows / csvBest.seconds).toFixed(0).padStart(8)} rows/s   (best of ${rounds}: ${csvBest.seconds.toFixed(2)} s)`);
    console.log(`  pain.001             ${(rows / xmlBest.seconds).toFixed(0).padStart(8)} rows/s   (best of ${rounds}: ${xmlBest.seconds.toFixed(2)} s)`);
    console.log(`  time ratio           ${ratio.toFixed(2)}   (pain.001 over CSV; goal: at most 2.00: ${ratio <= 2 ? 'met' : 'NOT MET'})`);
    console.log(`  peak RSS             ${peakRss} MB   (the highest of the pain.001 rounds; goal: under 150 MB: ${peakRss < 150 ? 'met' : 'NOT MET'})`);
    return ratio <= 2 && peakRss < 150;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
