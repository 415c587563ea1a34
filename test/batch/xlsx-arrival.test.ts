/** A spreadsheet in the inbox ends whole when its zip end record is there: taken after one stability interval, not four. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { endsWithZipEnd } from '../../src/engine/inbox-look.js';
import { writeWorkbook } from '../helpers/xlsx.js';

describe('a spreadsheet arriving in the inbox', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-xlsx-arrival-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ends whole with its zip end record, and not when cut anywhere before it', async () => {
    const file = join(dir, 'a.xlsx');
    await writeWorkbook(file, [{ name: 'Payouts', rows: [['external_id', 'output_amount'], ['A-1', 12.5]] }]);
    const bytes = readFileSync(file);
    expect(endsWithZipEnd(bytes)).toBe(true);
    expect(endsWithZipEnd(bytes.subarray(bytes.length - 200))).toBe(true);
    for (const cut of [1, 5, 21, 22, 100, Math.floor(bytes.length / 2)]) expect(endsWithZipEnd(bytes.subarray(0, bytes.length - cut)), `cut ${cut}`).toBe(false);
    expect(endsWithZipEnd(Buffer.from('external_id,amount\nA-1,12.50\n'))).toBe(false);
  });
});
