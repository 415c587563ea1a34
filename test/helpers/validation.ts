/** Validating a batch file in tests, with the default configuration (overrides of `batch.*` optional) and the test rules. */
import { afterAll, beforeAll } from 'vitest';
import { readerOptions } from '../../src/batch/batch-options.js';
import { BatchFileError } from '../../src/batch/file-error.js';
import type { ValidationReport } from '../../src/batch/validate-file.js';
import { validateFile } from '../../src/batch/validate-file.js';
import { configSchema } from '../../src/config/config.js';
import type { RowRuleOptions } from '../../src/validate/row-rules.js';
import { RULES } from './rows.js';

/**
 * The `batch.*` settings every batchConfig() starts from: a test file that runs another's cases again under other
 * settings (reader-parallel.test.ts: every CSV file on worker threads) sets them for its own tests (underBatchDefaults).
 */
export const batchDefaults: Record<string, unknown> = {};

/**
 * Sets `settings` as the batch defaults for this file's tests, and puts the defaults back after them: the integration
 * files share one module graph (isolate: false), so a default left set would change the files run after this one.
 */
export function underBatchDefaults(settings: Record<string, unknown>): void {
  let before: Record<string, unknown> = {};
  beforeAll(() => {
    before = { ...batchDefaults };
    Object.assign(batchDefaults, settings);
  });
  afterAll(() => {
    for (const key of Object.keys(batchDefaults)) delete batchDefaults[key];
    Object.assign(batchDefaults, before);
  });
}

export const batchConfig = (overrides: Record<string, unknown> = {}) => configSchema.parse({ batch: { ...batchDefaults, ...overrides } }).batch;

export const validate = (file: string, overrides: Record<string, unknown> = {}, rules: RowRuleOptions = RULES): Promise<ValidationReport> =>
  validateFile(file, { reader: readerOptions(batchConfig(overrides)), rules, maxReportedIssues: 100 });

/** The file-level error validating `file` ends with; fails the test when it is read without one. */
export async function fileError(file: string, overrides: Record<string, unknown> = {}): Promise<BatchFileError> {
  try {
    await validate(file, overrides);
  } catch (error) {
    if (error instanceof BatchFileError) return error;
    throw error;
  }
  throw new Error(`${file} was read without a file-level error`);
}
