/**
 * A pain.001 and the same rows as a CSV file (bench/generate-pain001.ts writes
 * both: five kinds of payout in PmtInf blocks of 1,000, some rows invalid)
 * give the same report: rows, valid and invalid, totals, and every issue on
 * the same line with the same code and the same words after its place; the
 * pain.001 read on one thread and on worker threads alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_ISO20022, generatePain001 } from '../../bench/generate-pain001.js';
import type { Issue } from '../../src/validate/issue.js';
import { validate } from '../helpers/validation.js';

/** An issue without its place (a pain.001's message starts with it: its transfer and element; a CSV's column is apart). */
const unplaced = (issue: Issue) => ({ line: issue.line, code: issue.code, words: issue.cell === undefined ? issue.message : issue.message.slice(issue.cell.length + 2) });

describe('a pain.001 and the same rows as CSV', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-pain001-csv-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('give the same report', async () => {
    const xml = join(dir, 'batch.xml');
    const csv = join(dir, 'batch.csv');
    await generatePain001(xml, csv, 6_000);
    const config = { iso20022: BENCH_ISO20022, max_reported_issues: 1_000 };
    const fromCsv = await validate(csv, config);
    const oneThread = await validate(xml, { ...config, parallel_min_bytes: 1e12 });
    const parallel = await validate(xml, { ...config, parallel_min_bytes: 0 });
    expect(parallel).toEqual(oneThread);
    expect(fromCsv.invalid).toBeGreaterThan(20);
    for (const key of ['rows', 'valid', 'invalid', 'totals', 'errorCount', 'warningCount', 'truncated'] as const) expect(oneThread[key], key).toEqual(fromCsv[key]);
    for (const kind of ['errors', 'warnings'] as const) {
      expect(oneThread[kind].map(unplaced), kind).toEqual(fromCsv[kind].map(unplaced));
      // And each is placed at its transfer, by its EndToEndId (BENCH-n is line n + 2).
      for (const issue of oneThread[kind]) expect(issue.cell).toMatch(new RegExp(`^PmtInf\\[\\d+\\]/CdtTrfTxInf\\[\\d+\\] \\(E2E BENCH-${issue.line - 2}\\): `));
    }
  });
});
