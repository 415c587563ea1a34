/**
 * Every intake case of intake.test.ts again, with every CSV file parsed and
 * checked on worker threads (however small: batch.parallel_min_bytes 0): the
 * same rows stored, the same outcomes, the same reports.
 */
import { underBatchDefaults } from '../helpers/validation.js';
import { intakeCases } from './intake-cases.js';

underBatchDefaults({ parallel_min_bytes: 0 });
intakeCases();
