/**
 * [2.4] Corridors as data (config/corridors.json): a row's corridor follows from
 * the recipient's country, the payout type and the currency pair.
 */
import data from '../../config/corridors.json' with { type: 'json' };
import type { Field } from './fields.js';

export type CorridorCheck = 'uk_sort_code_and_account' | 'iban_of_recipient_country' | 'bic' | 'nuban' | 'mobile_phone_for_country';

export interface Corridor {
  id: string;
  name: string;
  countries: '*' | string[];
  type: string;
  input_currencies: string[];
  output_currencies: string[];
  required: Field[];
  checks: CorridorCheck[];
}

export const CORRIDORS: readonly Corridor[] = data.corridors as Corridor[];

export interface CorridorQuery {
  country: string;
  type: string;
  input: string;
  output: string;
}

/** A corridor that names the country wins over one for any country (NGA bank in USD is nga-bank, not global). */
export function findCorridor(query: CorridorQuery, corridors: readonly Corridor[] = CORRIDORS): Corridor | undefined {
  const matching = corridors.filter(
    (c) =>
      c.type === query.type &&
      (c.countries === '*' || c.countries.includes(query.country)) &&
      c.input_currencies.includes(query.input) &&
      c.output_currencies.includes(query.output),
  );
  return matching.find((c) => c.countries !== '*') ?? matching[0];
}

/** One line per corridor, for the error that lists the corridors that do exist. */
export function describeCorridors(corridors: readonly Corridor[] = CORRIDORS): string {
  return corridors
    .map((c) => {
      const where = c.countries === '*' ? 'any country' : c.countries.length > 3 ? `${c.countries.slice(0, 3).join(', ')} and ${c.countries.length - 3} more` : c.countries.join(', ');
      return `${c.id} (${where}, ${c.type}, ${c.input_currencies.join('/')} to ${c.output_currencies.join('/')})`;
    })
    .join('; ');
}
