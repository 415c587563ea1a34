/**
 * Batch rows for tests, from the benchmark's generator, without its deliberately
 * invalid rows and without any row with a field whose digits end in 44, 55, 66
 * or 77 (the sandbox ends a payout in error, manual, stuck or exception by the
 * last two digits of the account or phone): every row pays.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateBatch } from '../../bench/generate-batch.js';

export async function validBatchLines(dir: string, rows: number): Promise<{ header: string; rows: string[] }> {
  const file = join(dir, `generated-${rows}.csv`);
  await generateBatch(file, Math.ceil(rows * 1.6) + 20);
  const [header, ...lines] = readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  const attention = (field: string): boolean => /(44|55|66|77)$/.test(field.replace(/\D/g, ''));
  const paying = lines.filter((line) => !/^BENCH-\d*99,/.test(line) && !line.split(',').some(attention));
  if (paying.length < rows) throw new Error(`only ${paying.length} paying rows generated, ${rows} wanted`);
  return { header: header as string, rows: paying.slice(0, rows) };
}
