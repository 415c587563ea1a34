/**
 * batch.max_row_characters bounds an element's text in a pain.001, given as
 * plain text or as CDATA (which once went unchecked: found by an attack on
 * the reader).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Transfer } from '../helpers/pain001.js';
import { gbpTransfer, ISO_CONFIG, pain001 } from '../helpers/pain001.js';
import { validate } from '../helpers/validation.js';

const gbp = (e2e: string, amount: string): Transfer => gbpTransfer(e2e, amount);

describe('pain.001 element text is bounded by batch.max_row_characters', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-pain001-cdata-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const limit = 1000;
  const withRemittance = (inner: string): string => {
    const path = join(dir, `${inner.startsWith('<!') ? 'cdata' : 'text'}.xml`);
    const xml = pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '12.50')] }]);
    writeFileSync(path, xml.replace('</CdtTrfTxInf>', `<RmtInf><Ustrd>${inner}</Ustrd></RmtInf></CdtTrfTxInf>`));
    return path;
  };
  const outcome = (path: string) => validate(path, { ...ISO_CONFIG, max_row_characters: limit })
    .then((report) => ({ valid: report.valid }), (error: Error & { code?: string }) => ({ refused: error.code }));

  it('as plain text, 50 times the limit is refused', async () => {
    expect(await outcome(withRemittance('x'.repeat(limit * 50)))).toEqual({ refused: 'xml_refused' });
  });

  it('as CDATA, 50 times the limit is refused the same', async () => {
    expect(await outcome(withRemittance(`<![CDATA[${'x'.repeat(limit * 50)}]]>`))).toEqual({ refused: 'xml_refused' });
  });
});
