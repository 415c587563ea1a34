/**
 * Every intake test of intake.test.ts again, with every CSV file parsed and
 * checked on worker threads (however small: batch.parallel_min_bytes 0): the
 * same rows stored, the same outcomes, the same reports.
 */
import { batchDefaults } from '../helpers/validation.js';

batchDefaults.parallel_min_bytes = 0;
await import('./intake.test.js');
