/**
 * XML tricks in a pain.001 that might make the amount
 * paid differ from the amount the control sums count, or let a second document
 * or a duplicate EndToEndId through. Each is either refused or read the same by
 * both (the amount paid is the amount counted).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Transfer } from '../helpers/pain001.js';
import { gbpTransfer, ISO_CONFIG, pain001 } from '../helpers/pain001.js';
import { validate } from '../helpers/validation.js';

const gbp = (e2e: string, amount: string, ccy = 'GBP'): Transfer => gbpTransfer(e2e, amount, { ccy });

describe('pain.001 tricks that hold', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-pain001-tricks-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const outcome = async (xml: string) => {
    const path = join(dir, `t${(n += 1)}.xml`);
    writeFileSync(path, xml);
    return validate(path, ISO_CONFIG).then(
      (r) => ({ valid: r.valid, invalid: r.invalid, totals: r.totals, codes: r.errors.map((e) => e.code) }),
      (error: Error & { code?: string }) => ({ refused: error.code }),
    );
  };
  /** INV-1 1250.00 plus INV-2 written as `amount` (its raw XML), with control sums of `sum` (1350.00 counts INV-2 as 100.00). */
  const withAmount = (amount: string, sum: string): string =>
    pain001('09', [{ debtor: 'Acme Trading Ltd', sum, transfers: [gbp('INV-1', '1250.00'), gbp('INV-2', '7.77')] }], { sum })
      .replace('>7.77<', `>${amount}<`);

  it.each([
    ['CDATA', '<![CDATA[100.00]]>'],
    ['a comment splitting it', '1<!-- x -->00.00'],
    ['spaces around it', '  100.00\n'],
  ])('an amount written with %s is counted as it is paid', async (_how, amount) => {
    expect(await outcome(withAmount(amount, '1350.00'))).toMatchObject({ valid: 2, totals: { GBP: '135000' } });
    expect(await outcome(withAmount(amount, '1250.00'))).toEqual({ refused: 'control_totals' });
  });

  it.each(['1 00.00', '+100.00', '-100.00', '1E2', '0x64', '100.00.00'])('an amount %s is never paid: the control sums cannot count it, so the file is refused whole', async (amount) => {
    expect(await outcome(withAmount(amount, '1250.00'))).toEqual({ refused: 'control_totals' });
  });

  it('an amount with more decimals than its currency has is never paid (JPY 100.5)', async () => {
    const xml = pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '100.5', 'JPY')] }]);
    expect(await outcome(xml)).toMatchObject({ valid: 0 });
  });

  it('a second Document root is refused whole', async () => {
    const one = pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '1.00')] }]);
    const body = one.slice(one.indexOf('<Document'));
    expect(await outcome(`${one}${body}`)).toEqual({ refused: 'xml_syntax' });
  });

  it('the same EndToEndId in two PmtInf blocks: neither is paid', async () => {
    const xml = pain001('09', [
      { debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '1.00')] },
      { debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '2.00')] },
    ]);
    expect(await outcome(xml)).toMatchObject({ valid: 0, invalid: 2 });
  });
});
