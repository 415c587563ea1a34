/**
 * Every intake test of intake.test.ts again, with every CSV file parsed and
 * checked on worker threads (however small): the same rows stored, the same
 * outcomes, the same reports.
 */
process.env.PAYBATCH_PARALLEL_MIN_BYTES = '0';
await import('./intake.test.js');
