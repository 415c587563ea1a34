/**
 * A pain.001's control sums cover every amount paid: an amount the sums'
 * decimal parser cannot read (19 leading zeros, 18 trailing zeros, a decimal
 * comma under batch.decimal_separator ",") refuses the file as control_totals,
 * where the row rules once read and paid it, outside CtrlSum (found by an
 * attack on the reader).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Transfer } from '../helpers/pain001.js';
import { gbpTransfer, ISO_CONFIG, pain001 } from '../helpers/pain001.js';
import { RULES } from '../helpers/rows.js';
import { validate } from '../helpers/validation.js';

const gbp = (e2e: string, amount: string): Transfer => gbpTransfer(e2e, amount);

describe('pain.001 control sums cover every amount paid', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-pain001-ctrlsum-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const file = (text: string): string => {
    const path = join(dir, `f${(n += 1)}.xml`);
    writeFileSync(path, text);
    return path;
  };
  /** One transfer the sums count (1250.00) and one written so that they do not (100.00). */
  const outOfTheSum = (hidden: string): string =>
    file(pain001('09', [{ debtor: 'Acme Trading Ltd', sum: '1250.00', transfers: [gbp('INV-1', '1250.00'), gbp('INV-2', hidden)] }], { sum: '1250.00' }));

  it.each([
    ['19 leading zeros', '0000000000000000000100.00'],
    ['18 trailing zeros', '100.000000000000000000'],
  ])('refuses a file whose CtrlSum leaves out an amount written with %s', async (_how, hidden) => {
    const report = await validate(outOfTheSum(hidden), ISO_CONFIG).catch((error: Error & { code?: string }) => ({ refused: error.code }));
    expect(report).toEqual({ refused: 'control_totals' });
  });

  it('refuses a file whose CtrlSum leaves out an amount written with a decimal comma (batch.decimal_separator ",")', async () => {
    const path = outOfTheSum('100,00');
    const report = await validate(path, { ...ISO_CONFIG, decimal_separator: ',' }, { ...RULES, decimalSeparator: ',' })
      .catch((error: Error & { code?: string }) => ({ refused: error.code }));
    expect(report).toEqual({ refused: 'control_totals' });
  });
});
