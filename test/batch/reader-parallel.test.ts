/**
 * Every reading case of reader.test.ts again, with every CSV file parsed and
 * checked on worker threads (however small: batch.parallel_min_bytes 0): the
 * same reports, the same rows, the same errors at the same lines as on one
 * thread.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { readerOptions } from '../../src/batch/batch-options.js';
import { checkCsvInParallel } from '../../src/batch/parallel-check.js';
import { batchConfig, underBatchDefaults } from '../helpers/validation.js';
import { RULES } from '../helpers/rows.js';
import { readingCases } from './reading-cases.js';

underBatchDefaults({ parallel_min_bytes: 0 });
readingCases();

it.skipIf(availableParallelism() < 2)('reads a small CSV file on worker threads under these settings', async () => {
  const file = fileURLToPath(new URL('../fixtures/batch/valid-lf.csv', import.meta.url));
  const parallel = await checkCsvInParallel(file, { reader: readerOptions(batchConfig()), rules: RULES, keepRows: false });
  expect(parallel).not.toBeNull();
  for await (const _segment of parallel?.segments ?? []) void _segment;
});
