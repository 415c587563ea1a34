/**
 * Every reading test of reader.test.ts again, with every CSV file parsed and
 * checked on worker threads (however small): the same reports, the same rows,
 * the same errors at the same lines as on one thread.
 */
process.env.PAYBATCH_PARALLEL_MIN_BYTES = '0';
await import('./reader.test.js');
