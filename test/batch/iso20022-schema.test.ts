/**
 * The pain.001 files the tests read are genuine: every one the helpers write
 * (by hand, as an ERP would, and by the `sepa` package) validates against the
 * official ISO 20022 XSD of its version with xmllint. The pain.002 paybatch
 * writes after a real run is checked the same way in pain002.test.ts; here,
 * a report answering what a pain.001 may hold that paybatch reads but the
 * schema would not allow (an E2E id of 40 characters, no MsgId, an amount
 * "12,50", a reason of any length): the report must stay valid all the same.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnsweredTransfer, ReportHeader } from '../../src/reports/pain002.js';
import { pain002 } from '../../src/reports/pain002.js';
import type { ResultRow } from '../../src/store/port.js';
import type { Transfer } from '../helpers/pain001.js';
import { gbpTransfer, pain001, sepaFile } from '../helpers/pain001.js';
import { validateAgainst, xmllintAvailable } from '../helpers/xmllint.js';

const xmllint = xmllintAvailable('the ISO 20022 schema tests');

const gbp = gbpTransfer;
const ngn = (e2e: string, amount: string): Transfer => ({
  e2e, amount, ccy: 'NGN', name: 'Chinua Achebe', mobile: '+234-8031234567',
  address: { street: '1 Marina Road', town: 'Lagos', postcode: '101001', country: 'NG' },
  account: '0123456785', clearing: { system: 'NGNIB', member: '058', bankName: 'Guaranty Trust Bank' },
});
const eur = (e2e: string): Transfer => ({ e2e, amount: '2000', ccy: 'EUR', name: 'Emmy Noether', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', email: 'emmy@example.org' });
const cash: Transfer = { e2e: 'CASH-1', amount: '5000.00', ccy: 'NGN', name: 'Wole Soyinka', mobile: '+234-8031234568', address: { street: '2 Broad Street', town: 'Lagos', postcode: '101001', country: 'NG' } };

describe.skipIf(xmllint === null)('the test pain.001 files against the ISO 20022 XSDs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-iso-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const check = (schema: 'pain.001.001.03' | 'pain.001.001.09', name: string, text: string): void => {
    const path = join(dir, `${name}.xml`);
    writeFileSync(path, text);
    const verdict = validateAgainst(xmllint as string, schema, path);
    expect(verdict.valid, verdict.output).toBe(true);
  };

  it.each(['03', '09'] as const)('the hand-written pain.001.001.%s validates', (version) => {
    check(`pain.001.001.${version}`, `hand-${version}`, pain001(version, [
      { debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '1250.00'), gbp('INV-2', '0.10', { name: 'Bletchley Supplies Ltd', business: true, mobile: undefined })] },
      { debtor: 'Acme Trading Ltd', currency: 'USD', transfers: [ngn('INV-3', '987654.32'), cash, eur('INV-4')] },
    ], { messageId: 'ERP-2026-11-27' }));
  });

  it.each(['pain.001.001.03', 'pain.001.001.09'] as const)('the file the sepa package writes as %s validates', (version) => {
    check(version, `sepa-${version}`, sepaFile(version, [
      { name: 'Emmy Noether', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', amount: 2000, e2e: 'SEPA-1', street: 'Unter den Linden 6', city: 'Berlin', country: 'DE' },
      { name: 'Marie Curie', iban: 'FR1420041010050500013M02606', bic: 'PSSTFRPPXXX', amount: 310.45, e2e: 'SEPA-2' },
    ]));
  });

  it('xmllint does refuse a file the schema does not allow (the check is not a formality)', () => {
    const path = join(dir, 'wrong-order.xml');
    writeFileSync(path, pain001('09', [{ debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '1.00')] }]).replace('<PmtMtd>TRF</PmtMtd>', '').replace('<PmtInfId>PMT-1</PmtInfId>', '<PmtInfId>PMT-1</PmtInfId><PmtMtd>CHQ</PmtMtd>'));
    const verdict = validateAgainst(xmllint as string, 'pain.001.001.09', path);
    expect(verdict.valid).toBe(false);
    expect(verdict.output).toMatch(/PmtMtd/);
  });
});

const row = (line: number, fields: Partial<ResultRow>): ResultRow => ({
  line, external_id: null, transaction_id: null, phase: 'final', outcome: null, outcome_detail: null, state: 'paid', state_reason: null, state_reason_code: null,
  input_amount: null, input_currency: null, output_amount: null, output_currency: null, funded_at: null, errors: null, recipient_name: null, settled_at: null,
  original_batch: null, original_line: null, ...fields,
});

describe.skipIf(xmllint === null)('a pain.002 answering what the schema would not allow in a pain.001', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-iso-pain002-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['03', '09'] as const)('stays valid against its XSD (answering pain.001.001.%s)', async (version) => {
    const header: ReportHeader = {
      version, originalMessageId: '', originalCount: ' 3', originalSum: '1e3', messageId: 'b'.repeat(40), createdAt: '2026-11-27T14:00:00',
      counts: { ACSC: 1, RJCT: 2, PDNG: 0 },
    };
    const invalid = JSON.stringify([{ column: 'Amt/InstdAmt', code: 'amount_invalid', message: `PmtInf[1]/CdtTrfTxInf[2] (E2E ${'E'.repeat(40)}): Amt/InstdAmt: ${'the amount is not a number; '.repeat(8)}` }]);
    const transfers: AnsweredTransfer[] = [
      { paymentId: 'P'.repeat(36), endToEndId: 'INV-1', amount: '1250.00', currency: 'GBP', row: row(2, {}) },
      { paymentId: 'P'.repeat(36), endToEndId: 'E'.repeat(40), amount: '12,50', currency: 'gbp', row: row(3, { phase: 'invalid', state: null, errors: invalid }) },
      { paymentId: '', endToEndId: '', amount: '', currency: '', row: row(4, { state: 'declined', state_reason_code: 'no_such_code', state_reason: 'é<&>"\u0007'.repeat(40) }) },
    ];
    async function* answered(): AsyncGenerator<AnsweredTransfer> {
      yield* transfers;
    }
    let xml = '';
    for await (const piece of pain002(header, answered())) xml += piece;
    const path = join(dir, `report-${version}.xml`);
    writeFileSync(path, xml);
    const verdict = validateAgainst(xmllint as string, version === '03' ? 'pain.002.001.03' : 'pain.002.001.10', path);
    expect(verdict.valid, `${verdict.output}\n${xml}`).toBe(true);
    // What the schema cannot carry is left out (an optional element) or the ISO placeholder (a required one), never altered to another value.
    expect(xml).toContain('<OrgnlMsgId>NOTPROVIDED</OrgnlMsgId>');
    expect(xml).not.toContain('E'.repeat(36));
    expect(xml).not.toContain('12,50');
  });
});
