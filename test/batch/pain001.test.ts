/**
 * ISO 20022 pain.001 files read as batches: written by hand as an ERP would and
 * by the `sepa` package, paybatch's code wrote neither. Control totals are the
 * file's manifest, amounts are exact, each transfer's problems are placed at
 * its XPath, and a file with a DOCTYPE, another namespace or no closing tag is
 * refused whole.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readerOptions } from '../../src/batch/batch-options.js';
import { openBatch } from '../../src/batch/reader.js';
import type { Transfer } from '../helpers/pain001.js';
import { gbpTransfer, ISO_CONFIG, pain001, sepaFile } from '../helpers/pain001.js';
import { batchConfig, fileError, validate } from '../helpers/validation.js';

const gbp = gbpTransfer;
const ngn = (e2e: string, amount: string): Transfer => ({
  e2e, amount, ccy: 'NGN', name: 'Chinua Achebe', mobile: '+234-8031234567',
  address: { street: '1 Marina Road', town: 'Lagos', postcode: '101001', country: 'NG' },
  account: '0123456785', clearing: { system: 'NGNIB', member: '058', bankName: 'Guaranty Trust Bank' },
});

describe('ISO 20022 pain.001 files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-pain001-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const file = (text: string): string => {
    const path = join(dir, `f${(n += 1)}.xml`);
    writeFileSync(path, text);
    return path;
  };
  const rowsOf = async (path: string): Promise<{ line: number; fields: Record<string, string | undefined> }[]> => {
    const opened = await openBatch(path, readerOptions(batchConfig(ISO_CONFIG)));
    const rows = [];
    for await (const row of opened.rows) rows.push(row);
    return rows;
  };

  it.each(['03', '09'] as const)('reads pain.001.001.%s with several PmtInf blocks and currencies, amounts exact', async (version) => {
    const path = file(pain001(version, [
      { debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '1250.00'), gbp('INV-2', '0.10', { name: 'Bletchley Supplies Ltd', business: true, mobile: undefined })] },
      { debtor: 'Acme Trading Ltd', currency: 'USD', transfers: [ngn('INV-3', '987654.32')] },
    ]));
    const report = await validate(path, ISO_CONFIG);
    expect(report.errors).toEqual([]);
    expect(report).toMatchObject({ rows: 3, valid: 3, invalid: 0, delimiter: null });
    expect(report.totals).toEqual({ GBP: '125010', NGN: '98765432' });
    const rows = await rowsOf(path);
    expect(rows.map((r) => r.line)).toEqual([2, 3, 4]);
    expect(rows[0]?.fields).toMatchObject({
      external_id: 'INV-1', type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '125000',
      recipient_first_name: 'Alan', recipient_last_name: 'Turing', recipient_type: 'person', recipient_country_code: 'GBR',
      recipient_sort_code: '089999', recipient_bank_account: '66374958', sender_external_id: 'SND-ACME', sender_first_name: 'Acme Trading', sender_last_name: 'Ltd',
    });
    expect(rows[1]?.fields).toMatchObject({ recipient_type: 'business', recipient_first_name: 'Bletchley Supplies', recipient_last_name: 'Ltd' });
    expect(rows[2]?.fields).toMatchObject({ output_currency_code: 'NGN', recipient_bank_code: '058', recipient_bank_name: 'Guaranty Trust Bank', recipient_country_code: 'NGA' });
  });

  it('takes a mobile number with no account as a cash payout to that phone, in E.164 (ISO writes +234-8031234568)', async () => {
    const cash: Transfer = { e2e: 'CASH-1', amount: '5000.00', ccy: 'NGN', name: 'Wole Soyinka', mobile: '+234-8031234568', address: { street: '2 Broad Street', town: 'Lagos', postcode: '101001', country: 'NG' } };
    const rows = await rowsOf(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [cash] }])));
    expect(rows[0]?.fields).toMatchObject({ type: 'cash', recipient_phone_number: '+2348031234568' });
    expect(rows[0]?.fields.recipient_bank_account).toBeUndefined();
  });

  it('reads files written by the sepa package (.03 and .09), placing each problem at its transfer', async () => {
    for (const version of ['pain.001.001.03', 'pain.001.001.09'] as const) {
      const path = file(sepaFile(version, [
        { name: 'Emmy Noether', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', amount: 2000, e2e: 'SEPA-1', street: 'Unter den Linden 6', city: 'Berlin', country: 'DE' },
        { name: 'Marie Curie', iban: 'FR1420041010050500013M02606', bic: 'PSSTFRPPXXX', amount: 310.45, e2e: 'SEPA-2' },
      ]));
      const rows = await rowsOf(path);
      expect(rows.map((r) => [r.fields.external_id, r.fields.output_amount_in_cents, r.fields.output_currency_code, r.fields.recipient_iban])).toEqual([
        ['SEPA-1', '200000', 'EUR', 'DE89370400440532013000'],
        ['SEPA-2', '31045', 'EUR', 'FR1420041010050500013M02606'],
      ]);
      expect(rows[0]?.fields).toMatchObject({ recipient_street: 'Unter den Linden 6', recipient_city: 'Berlin', recipient_country_code: 'DEU' });
      // A SEPA file carries neither the creditor's phone nor a postal code: said per transfer, at its element.
      const report = await validate(path, ISO_CONFIG);
      expect(report.valid).toBe(0);
      expect(report.errors).toContainEqual(expect.objectContaining({ line: 3, column: 'Cdtr/CtctDtls/MobNb', cell: 'PmtInf[1]/CdtTrfTxInf[2] (E2E SEPA-2): Cdtr/CtctDtls/MobNb' }));
    }
  });

  it('refuses the file whole when a control total does not match, naming both figures', async () => {
    const transfers = [gbp('INV-1', '1250.00'), gbp('INV-2', '310.45')];
    const wrongGroupSum = await fileError(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers }], { sum: '1560.46' })), ISO_CONFIG);
    expect(wrongGroupSum.code).toBe('control_totals');
    expect(wrongGroupSum.message).toContain('GrpHdr/CtrlSum says 1560.46, the transfers\' amounts add up to 1560.45');
    const wrongCount = await fileError(file(pain001('03', [{ debtor: 'Acme Trading Ltd', transfers, count: '3' }])), ISO_CONFIG);
    expect(wrongCount.message).toContain('PmtInf[1]/NbOfTxs says 3 transfers, the file holds 2');
    // Trailing zeros are the same number: 1560.450 is 1560.45 exactly.
    expect((await validate(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers }], { sum: '1560.450' })), ISO_CONFIG)).valid).toBe(2);
  });

  it('refuses NOTPROVIDED as an end-to-end id, and names a debtor with no sender defaults', async () => {
    const report = await validate(file(pain001('09', [
      { debtor: 'Acme Trading Ltd', transfers: [gbp('NOTPROVIDED', '10.00')] },
      { debtor: 'Unknown Debtor GmbH', transfers: [gbp('INV-9', '10.00')] },
    ])), ISO_CONFIG);
    expect(report.valid).toBe(0);
    expect(report.errors).toContainEqual(expect.objectContaining({ line: 2, code: 'end_to_end_id_not_provided', cell: 'PmtInf[1]/CdtTrfTxInf[1] (E2E NOTPROVIDED): PmtId/EndToEndId' }));
    expect(report.errors).toContainEqual(expect.objectContaining({ line: 3, code: 'sender_not_configured', cell: 'PmtInf[2]/CdtTrfTxInf[1] (E2E INV-9): Dbtr' }));
  });

  it('refuses an amount given only as EqvtAmt unless configured', async () => {
    const equivalent = gbp('EQ-1', '1.00', { extra: '' });
    const text = pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [equivalent] }]).replace('<InstdAmt Ccy="GBP">1.00</InstdAmt>', '<EqvtAmt><Amt Ccy="USD">1.00</Amt><CcyOfTrf>GBP</CcyOfTrf></EqvtAmt>');
    const report = await validate(file(text), ISO_CONFIG);
    expect(report.errors).toContainEqual(expect.objectContaining({ code: 'equivalent_amount_refused' }));
  });

  it('refuses a DOCTYPE and its entities outright, before any entity is expanded', async () => {
    const bomb = '<!DOCTYPE Document [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>';
    const attack = await fileError(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('&b;', '1.00')] }], { prolog: bomb }).replace('&amp;b;', '&b;')), ISO_CONFIG);
    expect(attack.code).toBe('xml_refused');
    expect(attack.message).toContain('DOCTYPE');
    const external = await fileError(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('X', '1.00')] }], { prolog: '<!DOCTYPE Document SYSTEM "file:///etc/passwd">' })), ISO_CONFIG);
    expect(external.code).toBe('xml_refused');
    // An entity never declared is not well-formed XML: refused, not read as text.
    const undeclared = await fileError(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('X', '1.00')] }]).replace('<EndToEndId>X', '<EndToEndId>&xxe;')), ISO_CONFIG);
    expect(undeclared.code).toBe('xml_syntax');
  });

  it('refuses another message or version, naming the namespace found, and a file without its closing tag', async () => {
    const pain008 = pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('X', '1.00')] }]).replace('pain.001.001.09', 'pain.008.001.08');
    const other = await fileError(file(pain008), ISO_CONFIG);
    expect(other.code).toBe('xml_refused');
    expect(other.message).toContain('urn:iso:std:iso:20022:tech:xsd:pain.008.001.08');
    const cut = await fileError(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('X', '1.00')] }], { tail: '</CstmrCdtTrfInitn>' })), ISO_CONFIG);
    expect(['xml_not_whole', 'xml_syntax']).toContain(cut.code);
    const noEnd = await fileError(file(pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('X', '1.00')] }], { tail: '' })), ISO_CONFIG);
    expect(['xml_not_whole', 'xml_syntax']).toContain(noEnd.code);
  });
});
