import { getCountries, getExampleNumber, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { describe, expect, it } from 'vitest';
import { fastPhoneType } from '../../src/validate/phone-type.js';

/** Every country's example number, and variants around it: other first and last digits, shorter, longer. */
function sampleNumbers(): string[] {
  const numbers = new Set<string>(['+4407400123456', '+447400123456', '+447911123456', '+2342012345678', '+12025550123', '+15145550123', '+79161234567', '+78001234567', '+5215512345678', '+80012345678']);
  for (const country of getCountries()) {
    const example = getExampleNumber(country, examples);
    if (!example) continue;
    const national = example.nationalNumber as string;
    const code = `+${example.countryCallingCode}`;
    numbers.add(code + national);
    for (let d = 0; d <= 9; d++) {
      numbers.add(code + national.slice(0, -1) + d);
      numbers.add(code + d + national.slice(1));
    }
    numbers.add(code + national.slice(0, -1));
    numbers.add(`${code + national}5`);
    numbers.add(`${code}0${national}`);
  }
  return [...numbers].filter((n) => /^\+[1-9]\d{6,14}$/.test(n));
}

describe('phone number types with compiled patterns', () => {
  const numbers = sampleNumbers();

  it(`agrees with libphonenumber on every one of ${numbers.length} numbers where it answers`, () => {
    let answered = 0;
    const disagreements: string[] = [];
    for (const number of numbers) {
      const fast = fastPhoneType(number);
      if (!fast) continue;
      answered += 1;
      const parsed = parsePhoneNumberFromString(number);
      const type = parsed?.getType();
      const country = type === undefined ? undefined : parsed?.country;
      const fastCountry = fast.type === undefined ? undefined : fast.country;
      if (fast.type !== type || fastCountry !== country) disagreements.push(`${number}: library ${type}/${country}, fast ${fast.type}/${fastCountry}`);
    }
    expect(disagreements).toEqual([]);
    expect(numbers.length).toBeGreaterThan(5000);
    expect(answered / numbers.length).toBeGreaterThan(0.8);
  });

  it('declines where parsing could strip a national prefix, and for non-geographic numbers', () => {
    expect(fastPhoneType('+4407400123456')).toBeNull();
    expect(fastPhoneType('+80012345678')).toBeNull();
    expect(fastPhoneType('+447400123456')).toEqual({ country: 'GB', type: 'MOBILE' });
    expect(fastPhoneType('+447911123456')).toEqual({ country: 'GG', type: 'MOBILE' });
  });
});
