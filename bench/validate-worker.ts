/**
 * One measurement of `bench:validate`, in its own process so that its peak RSS
 * is its own: `parse FILE` runs csv-parse alone with the reader's options;
 * `validate FILE [BATCH_JSON]` runs paybatch's whole validation (of a CSV, or
 * of a pain.001 by its .xml name). Prints one JSON line.
 */
import { keepHeapNearLive } from '../src/heap.js';

// As the paybatch command does (src/cli/main.ts), for csv-parse alone too: before anything else is loaded, or the
// young generation grows while the modules load, and stays grown (25 MB more at the peak than the command).
keepHeapNearLive();
const { createReadStream } = await import('node:fs');
const { parse } = await import('csv-parse');
const { readerOptions, ruleOptions } = await import('../src/batch/batch-options.js');
const { validateFile } = await import('../src/batch/validate-file.js');
const { systemClock } = await import('../src/clock.js');
const { configSchema } = await import('../src/config/config.js');

// A third argument: the batch configuration as JSON (for a pain.001, its iso20022 senders).
const [mode, file, batchJson] = process.argv.slice(2) as [string, string, string | undefined];
const batch = configSchema.parse(batchJson === undefined ? {} : { batch: JSON.parse(batchJson) as unknown }).batch;
const started = performance.now();
let rows = 0;
let invalid = 0;
if (mode === 'parse') {
  const parser = createReadStream(file, { encoding: 'utf8', highWaterMark: 64 * 1024 }).pipe(
    parse({ delimiter: ',', bom: true, trim: true, relax_quotes: true, skip_empty_lines: true, info: true, max_record_size: batch.max_row_characters }),
  );
  for await (const _record of parser) rows += 1;
  rows -= 1; // the header
} else {
  const report = await validateFile(file, { reader: readerOptions(batch), rules: ruleOptions(batch, systemClock), maxReportedIssues: batch.max_reported_issues });
  rows = report.rows;
  invalid = report.invalid;
}
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ mode, rows, invalid, seconds, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }));
