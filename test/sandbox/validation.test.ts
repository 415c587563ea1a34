import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';

describe('sandbox validation on create [2.1]-[2.4], [D5], [D6], [D12]', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await testSandbox();
  });
  afterAll(() => sandbox.stop());

  it('answers 422 with every error at once and creates nothing', async () => {
    const ledgerBefore = (await operator(sandbox, 'GET', '/ledger')).body;
    const body = createBody('gbr', {
      output_amount_in_cents: '12.50',
      input_currency_code: 'XYZ',
      sender: { external_id: 'S-BROKEN', birth_date: '2999-01-01', phone_number: '07700900123', country_code: 'UK', identification_type: 'passport', email: 'not-an-email', ip: '300.1.1.1' },
      recipient: { first_name: '', sort_code: '12-34-56', bank_account_type: 'cheque' },
    });
    const answer = await call(sandbox, 'POST', '/transactions', body);
    expect(answer.status).toBe(422);
    expect(Object.keys(answer.body.errors).sort()).toEqual([
      'input_currency_code',
      'output_amount_in_cents',
      'recipient.bank_account_type',
      'recipient.first_name',
      'recipient.sort_code',
      'sender.birth_date',
      'sender.country_code',
      'sender.email',
      'sender.identification_number',
      'sender.ip',
      'sender.phone_number',
    ]);
    expect(answer.body.errors['sender.identification_number']).toEqual(['is required when identification_type is present']);
    expect((await call(sandbox, 'GET', `/transactions?external_id=${String(body.external_id)}`)).body).toEqual([]);
    expect((await operator(sandbox, 'GET', '/ledger')).body).toEqual(ledgerBefore);
    const stillCreatable = await call(sandbox, 'POST', '/transactions', createBody('gbr', { external_id: body.external_id, sender: { external_id: 'S-BROKEN' } }));
    expect(stillCreatable.status).toBe(201);
  });

  it('requires the fields of 2.1 and of the sender [2.2]', async () => {
    const answer = await call(sandbox, 'POST', '/transactions', { sender: {}, recipient: 'nobody' });
    expect(answer.status).toBe(422);
    for (const field of ['external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount_in_cents', 'recipient',
      'sender.type', 'sender.first_name', 'sender.last_name', 'sender.birth_date', 'sender.country_code', 'sender.phone_number', 'sender.external_id']) {
      expect(answer.body.errors[field], field).toBeDefined();
    }
    const notObject = await call(sandbox, 'POST', '/transactions', ['a list']);
    expect(notObject.status).toBe(422);
    expect(notObject.body.errors.base).toEqual(['the request body must be a JSON object']);
  });

  it('refuses a duplicate external_id and returns the existing transaction [D6]', async () => {
    const body = createBody('deu');
    const first = await call(sandbox, 'POST', '/transactions', body);
    const second = await call(sandbox, 'POST', '/transactions', { ...body, output_amount_in_cents: '99' });
    expect(second.status).toBe(422);
    expect(second.body.errors.external_id).toEqual(['has already been taken']);
    expect(second.body.meta.existing.transaction).toEqual(first.body);
    expect((await call(sandbox, 'GET', `/transactions?external_id=${String(body.external_id)}`)).body).toHaveLength(1);
  });

  it('refuses a disabled corridor, and accepts it again once re-enabled [1], [D12]', async () => {
    expect((await operator(sandbox, 'PUT', '/corridors/nga-cash', { active: false })).body.active).toBe(false);
    const corridors = await call(sandbox, 'GET', '/corridors/NGA');
    expect(corridors.body.find((c: { id: string }) => c.id === 'nga-cash').active).toBe(false);
    const refused = await call(sandbox, 'POST', '/transactions', createBody('ngaCash'));
    expect(refused.status).toBe(422);
    expect(refused.body.errors.corridor).toEqual(['corridor nga-cash is not active']);
    await operator(sandbox, 'PUT', '/corridors/nga-cash', { active: true });
    expect((await call(sandbox, 'POST', '/transactions', createBody('ngaCash'))).status).toBe(201);
    expect((await operator(sandbox, 'PUT', '/corridors/atlantis', { active: true })).status).toBe(404);
  });

  it('refuses a corridor that does not exist for the country, type or currency pair [2.4]', async () => {
    const cashToGbr = await call(sandbox, 'POST', '/transactions', createBody('gbr', { type: 'cash' }));
    expect(cashToGbr.body.errors.corridor).toEqual(['no cash corridor to GBR for USD to GBP']);
    const eurToNga = await call(sandbox, 'POST', '/transactions', createBody('ngaBank', { input_currency_code: 'EUR' }));
    expect(eurToNga.body.errors.corridor).toEqual(['no bank corridor to NGA for EUR to NGN']);
  });

  it('prefers the corridor that names the country over the one for every country', async () => {
    const ngaUsd = await call(sandbox, 'POST', '/transactions', createBody('ngaBank', { output_currency_code: 'USD' }));
    expect(ngaUsd.status).toBe(201);
  });

  it('pays the SEPA countries that use the euro outside the euro area by IBAN in EUR', async () => {
    for (const [country, iban, phone] of [['MCO', 'MC5811222000010123456789030', '+377612345678'], ['SMR', 'SM86U0322509800000000270100', '+37866661212'], ['AND', 'AD1200012030200359100100', '+376312345'], ['VAT', 'VA59001123000012345678', '+390669812345']] as const) {
      const created = await call(sandbox, 'POST', '/transactions', createBody('deu', { recipient: { country_code: country, iban, phone_number: phone } }));
      expect(created.status, country).toBe(201);
    }
  });

  it('requires the recipient fields of the corridor and checks their formats', async () => {
    const gbr = await call(sandbox, 'POST', '/transactions', createBody('gbr', { recipient: { sort_code: '', bank_account: '1234567' } }));
    expect(gbr.body.errors['recipient.sort_code']).toEqual(['is required for corridor gbr-bank']);
    expect(gbr.body.errors['recipient.bank_account']).toEqual(['must be 8 digits for corridor gbr-bank']);
    const badIban = await call(sandbox, 'POST', '/transactions', createBody('deu', { recipient: { iban: 'DE89370400440532013001' } }));
    expect(badIban.body.errors['recipient.iban']).toEqual(['is invalid']);
    const foreignIban = await call(sandbox, 'POST', '/transactions', createBody('deu', { recipient: { iban: 'FR1420041010050500013M02606' } }));
    expect(foreignIban.body.errors['recipient.iban']).toEqual(['is not an IBAN of DEU']);
    const nuban = await call(sandbox, 'POST', '/transactions', createBody('ngaBank', { recipient: { bank_account: '12345678' } }));
    expect(nuban.body.errors['recipient.bank_account']).toEqual(['must be a 10-digit NUBAN for corridor nga-bank']);
    const bic = await call(sandbox, 'POST', '/transactions', createBody('global', { recipient: { bic: 'chase' } }));
    expect(bic.body.errors['recipient.bic']).toEqual(['is invalid']);
  });

  it('requires a cash pickup phone valid for the recipient country [2.3], [2.4]', async () => {
    const ukPhone = await call(sandbox, 'POST', '/transactions', createBody('ngaCash', { recipient: { phone_number: '+447700900456' } }));
    expect(ukPhone.body.errors['recipient.phone_number']).toEqual(['is not a valid phone number for NGA']);
    const business = await call(sandbox, 'POST', '/transactions', createBody('gbr', { recipient: { type: 'business', phone_number: '' } }));
    expect(business.status).toBe(201);
    const person = await call(sandbox, 'POST', '/transactions', createBody('gbr', { recipient: { phone_number: '' } }));
    expect(person.body.errors['recipient.phone_number']).toEqual(['is required for a person recipient']);
  });

  it('keeps senders by external_id and updates their details from later transactions [2.2]', async () => {
    const first = await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-KEPT', city: 'Leeds' } }));
    const second = await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-KEPT', city: 'York' } }));
    expect(second.body.sender.id).toBe(first.body.sender.id);
    expect(second.body.sender.city).toBe('York');
    expect((await call(sandbox, 'GET', `/transactions/${first.body.id}`)).body.sender.city).toBe('York');
  });
});
