/**
 * One validation of a .xlsx, in a process of its own so that its memory is its
 * own (bench:validate's sheet, and the test of a huge sheet): `FILE ROWS`.
 * Prints one JSON line: the rows read and valid, the first errors, the RSS
 * before reading, the peak RSS (getrusage) at half the rows and at the end, in
 * MB, and the seconds the validation took.
 */
import { keepHeapNearLive } from '../src/heap.js';

// As the paybatch command does (src/cli/main.ts), before anything else is loaded.
keepHeapNearLive();
const { readerOptions, ruleOptions } = await import('../src/batch/batch-options.js');
const { validateFile } = await import('../src/batch/validate-file.js');
const { configSchema } = await import('../src/config/config.js');

const [file, rowsText] = process.argv.slice(2) as [string, string];
const half = Math.floor(Number(rowsText) / 2);
const batch = configSchema.parse({}).batch;
const mb = (bytes: number): number => Math.round(bytes / 1048576);
const peak = (): number => mb(process.resourceUsage().maxRSS * 1024);
const beforeMb = mb(process.memoryUsage().rss);
const started = performance.now();
let seen = 0;
let peakHalfMb = 0;
const report = await validateFile(file, {
  // A fixed day: the sheet's senders were born in 1985, whatever today is.
  reader: readerOptions(batch), rules: ruleOptions(batch, { now: () => Date.parse('2026-11-21T00:00:00Z') }), maxReportedIssues: 10,
}, {
  row() {
    seen += 1;
    if (seen === half) peakHalfMb = peak();
  },
});
const seconds = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({ rows: report.rows, valid: report.valid, errors: report.errors, beforeMb, peakHalfMb, peakMb: peak(), seconds })}\n`);
