/**
 * The pain.001 paid and answered with a pain.002 again, with the file taken in
 * on worker threads (however small: batch.parallel_min_bytes 0): the same
 * rows stored and paid, the same status report.
 */
import { batchDefaults } from '../helpers/validation.js';

batchDefaults.parallel_min_bytes = 0;
await import('./pain002.test.js');
