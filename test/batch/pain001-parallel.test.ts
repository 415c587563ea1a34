/**
 * Every pain.001 reading test again, with every file cut into its transfers
 * and checked on worker threads (however small: batch.parallel_min_bytes 0):
 * the same reports, the same refusals. Then a file of many transfers in
 * several PmtInf blocks, read both ways: the same report to the last issue,
 * each placed at its transfer, a duplicate end-to-end id found across pieces,
 * and the control totals added up from the pieces.
 */
import { availableParallelism } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readerOptions } from '../../src/batch/batch-options.js';
import { checkPain001InParallel } from '../../src/batch/iso20022/pain001-parallel.js';
import { gbpTransfer, ISO_CONFIG, pain001 } from '../helpers/pain001.js';
import { batchConfig, batchDefaults, validate } from '../helpers/validation.js';
import { RULES } from '../helpers/rows.js';

batchDefaults.parallel_min_bytes = 0;
await import('./pain001.test.js');
await import('./pain001-tricks.test.js');
await import('./pain001-control-sums.test.js');
await import('./pain001-cdata.test.js');

describe.skipIf(availableParallelism() < 2)('a pain.001 checked on worker threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-pain001-parallel-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** 3 blocks of 700 transfers (several pieces each), every 50th with a wrong account, one end-to-end id twice far apart. */
  const many = (edit: (xml: string) => string = (xml) => xml): string => {
    const blocks = [0, 1, 2].map((b) => ({
      debtor: 'Acme Trading Ltd',
      transfers: Array.from({ length: 700 }, (_, i) => {
        const n = b * 700 + i;
        return gbpTransfer(n === 1900 ? 'INV-7' : `INV-${n}`, `${1 + (n % 97)}.${String(n % 100).padStart(2, '0')}`, n % 50 === 49 ? { account: '12345678' } : {});
      }),
    }));
    const path = join(dir, `many-${Math.random().toString(36).slice(2)}.xml`);
    writeFileSync(path, edit(pain001('09', blocks)));
    return path;
  };
  const bothWays = async (path: string, config: Record<string, unknown> = ISO_CONFIG) => {
    const parallel = await validate(path, { ...config, parallel_min_bytes: 0 });
    const oneThread = await validate(path, { ...config, parallel_min_bytes: 1e12 });
    return { parallel, oneThread };
  };

  it('is taken for a small file under these settings', async () => {
    const check = await checkPain001InParallel(many(), { reader: readerOptions(batchConfig(ISO_CONFIG)), rules: RULES, keepRows: false });
    expect(check).not.toBeNull();
    let pieces = 0;
    for await (const _segment of check?.segments ?? []) pieces += 1;
    expect(pieces).toBeGreaterThan(6);
  });

  it('gives the report one thread gives, to the last issue and its place', async () => {
    const { parallel, oneThread } = await bothWays(many());
    expect(parallel).toEqual(oneThread);
    expect(parallel).toMatchObject({ rows: 2100, delimiter: null });
    expect(parallel.invalid).toBe(2100 / 50 + 2);
    expect(parallel.errors.map((e) => e.cell)).toContain('PmtInf[3]/CdtTrfTxInf[501] (E2E INV-7): PmtId/EndToEndId');
    expect(parallel.errors.map((e) => e.cell)).toContain('PmtInf[2]/CdtTrfTxInf[50] (E2E INV-749): CdtrAcct/Id/Othr/Id');
  });

  it('does not count the space between transfers as the PmtInf\'s text (one thread does not either)', async () => {
    // 700 transfers a block, 40 spaces after each: 28,000 characters of space in each PmtInf, above a bound of 8,192 for an element's text.
    const path = many((xml) => xml.replaceAll('</CdtTrfTxInf>', `</CdtTrfTxInf>\n${' '.repeat(39)}`));
    const { parallel, oneThread } = await bothWays(path, { ...ISO_CONFIG, max_row_characters: 8192 });
    expect(oneThread).toMatchObject({ rows: 2100 });
    expect(parallel).toEqual(oneThread);
  });

  it('with a namespace prefix, comments between transfers and CDATA in them', async () => {
    const path = many((xml) => xml
      .replace(/<(\/?)([A-Za-z])/g, '<$1p:$2').replace('<p:Document xmlns=', '<p:Document xmlns:p=')
      .replaceAll('</p:CdtTrfTxInf><p:CdtTrfTxInf>', '</p:CdtTrfTxInf><!-- <p:CdtTrfTxInf> --><p:CdtTrfTxInf>')
      .replace('>Wilmslow<', '><![CDATA[Wilm</p:TwnNm>slow]]><'));
    const { parallel, oneThread } = await bothWays(path);
    expect(parallel).toEqual(oneThread);
    expect(parallel.rows).toBe(2100);
  });

  it.each([
    ['a wrong CtrlSum in the second block', (xml: string) => xml.replace(/(<PmtInf>[\s\S]*?<PmtInf>[\s\S]*?<CtrlSum>)(\d+)/, '$11$2')],
    ['an element closed in the wrong order in a transfer', (xml: string) => xml.replace('<Nm>Alan Turing</Nm>', '<Nm>Alan Turing</Cdtr></Nm>')],
    ['an unbound prefix in a transfer', (xml: string) => xml.replace('<Nm>Alan Turing</Nm>', '<x:Nm>Alan Turing</x:Nm>')],
    ['an undeclared entity in a transfer', (xml: string) => xml.replace('<Nm>Alan Turing</Nm>', '<Nm>Alan &bogus; Turing</Nm>')],
    ['a file cut short in a transfer', (xml: string) => xml.slice(0, Math.floor(xml.length / 2))],
    ['a missing closing tag', (xml: string) => xml.replace('</Document>', '')],
    ['an amount that is not a decimal', (xml: string) => xml.replace('>1.00<', '>1,00<')],
  ])('refuses %s as one thread does', async (_what, edit) => {
    const path = many(edit);
    const refusal = (config: Record<string, unknown>) => validate(path, config).then(() => null, (error: Error & { code?: string; line?: number | null }) => ({ code: error.code, line: error.line, message: error.message }));
    const parallel = await refusal({ ...ISO_CONFIG, parallel_min_bytes: 0 });
    expect(parallel).not.toBeNull();
    expect(parallel).toEqual(await refusal({ ...ISO_CONFIG, parallel_min_bytes: 1e12 }));
  });
});
