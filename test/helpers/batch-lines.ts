/**
 * Batch rows for tests, from the benchmark's generator, without its deliberately
 * invalid rows and without the external ids whose suffix makes the sandbox end a
 * payout in error, manual, stuck or exception: every row pays.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateBatch } from '../../bench/generate-batch.js';

export async function validBatchLines(dir: string, rows: number): Promise<{ header: string; rows: string[] }> {
  const file = join(dir, `generated-${rows}.csv`);
  await generateBatch(file, Math.ceil(rows * 1.1) + 10);
  const [header, ...lines] = readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  return { header: header as string, rows: lines.filter((line) => !/^BENCH-\d*(99|44|55|66|77),/.test(line)).slice(0, rows) };
}
