import { describe, expect, it } from 'vitest';
import { checkIban, ibanElectronic, isValidBic, nubanCheckDigit, nubanValid, ukModulusValid } from '../../src/validate/bank-accounts.js';

describe('IBAN (ISO 13616)', () => {
  // Published example IBANs of each country's registry entry.
  const valid = ['DE89370400440532013000', 'FR1420041010050500013M02606', 'NL91ABNA0417164300', 'ES9121000418450200051332',
    'IT60X0542811101000000123456', 'AT611904300234573201', 'BE68539007547034', 'GB29NWBK60161331926819'];
  it.each(valid)('accepts %s', (iban) => expect(checkIban(iban)).toBe('valid'));

  it('tells a wrong check digit, a wrong length, a bad format and an unknown country apart', () => {
    expect(checkIban('DE89370400440532013001')).toBe('checksum');
    expect(checkIban('DE8937040044053201300')).toBe('length');
    expect(checkIban('NL91ABNA04171643AB')).toBe('format');
    expect(checkIban('ZZ89370400440532013000')).toBe('country_unknown');
  });

  it('removes spaces and lower case as people write them', () => {
    expect(ibanElectronic('de89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
  });
});

describe('BIC (ISO 9362)', () => {
  it('accepts 8 and 11 characters, refuses the rest', () => {
    expect(isValidBic('DEUTDEFF')).toBe(true);
    expect(isValidBic('DEUTDEFF500')).toBe(true);
    expect(isValidBic('CHASUS33XXX')).toBe(true);
    for (const bic of ['DEUTDEF', 'DEUT1EFF', 'DEUTDEFF5', 'DEUTXXFF']) expect(isValidBic(bic), bic).toBe(false);
  });
});

describe('UK sort code and account modulus check (Vocalink v8.50, chapter 3 examples)', () => {
  const cases: [string, string, boolean][] = [
    ['089999', '66374958', true], ['107999', '88837491', true], ['202959', '63748472', true], ['871427', '46238510', true],
    ['872427', '46238510', true], ['871427', '09123496', true], ['871427', '99123496', true], ['820000', '73688637', true],
    ['827999', '73988638', true], ['827101', '28748352', true], ['134020', '63849203', true], ['118765', '64371389', true],
    ['200915', '41011166', true], ['938611', '07806039', true], ['938600', '42368003', true], ['938063', '55065200', true],
    ['772798', '99345694', true], ['086090', '06774744', true], ['309070', '02355688', true], ['309070', '12345668', true],
    ['309070', '12345677', true], ['309070', '99345694', true], ['938063', '15764273', false], ['938063', '15764264', false],
    ['938063', '15763217', false], ['118765', '64371388', false], ['203099', '66831036', false], ['203099', '58716970', false],
    ['089999', '66374959', false], ['107999', '88837493', false], ['074456', '12345112', true], ['070116', '34012583', true],
    ['074456', '11104102', true], ['180002', '00000190', true],
  ];
  it.each(cases)('%s %s is %s', (sortCode, account, expected) => expect(ukModulusValid(sortCode, account)).toBe(expected));
});

describe('NUBAN check digit (CBN)', () => {
  it('matches the CBN example: bank 011, serial 000001457, check digit 9', () => {
    expect(nubanCheckDigit('011', '000001457')).toBe(9);
    expect(nubanValid('011', '0000014579')).toBe(true);
  });

  it('refuses a wrong check digit, another bank code, and wrong lengths', () => {
    expect(nubanValid('011', '0000014578')).toBe(false);
    expect(nubanValid('058', '0000014579')).toBe(false);
    expect(nubanValid('011', '000001457')).toBe(false);
    expect(nubanValid('01', '0000014579')).toBe(false);
  });

  it('treats a 3-digit code as the 6-digit code padded with zeros', () => {
    expect(nubanCheckDigit('000058', '012345678')).toBe(nubanCheckDigit('058', '012345678'));
    const account = `123456789${nubanCheckDigit('090267', '123456789')}`;
    expect(nubanValid('090267', account)).toBe(true);
  });
});
