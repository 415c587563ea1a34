/**
 * Writes a large, realistic batch across every corridor for the benchmarks:
 * valid UK modulus pairs (Vocalink's examples), IBANs and NUBANs with computed
 * check digits, varied phones, a pool of repeating senders, and about one row in
 * a hundred deliberately invalid.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const HEADER = [
  'external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount',
  'sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date', 'sender_country_code', 'sender_city', 'sender_phone_number', 'sender_email',
  'recipient_type', 'recipient_first_name', 'recipient_last_name', 'recipient_country_code', 'recipient_city', 'recipient_street', 'recipient_postal_code', 'recipient_phone_number',
  'recipient_bank_name', 'recipient_bank_code', 'recipient_bank_account', 'recipient_bank_account_type', 'recipient_sort_code', 'recipient_iban', 'recipient_bic',
];

export const UK_PAIRS = [['089999', '66374958'], ['107999', '88837491'], ['202959', '63748472'], ['871427', '46238510'], ['820000', '73688637'], ['827101', '28748352'], ['134020', '63849203'], ['118765', '64371389'], ['938063', '55065200'], ['086090', '06774744']];

export function ibanDE(n: number): string {
  const bban = `37040044${String(n).padStart(10, '0')}`;
  let remainder = 0;
  for (const digit of `${bban}131400`) remainder = (remainder * 10 + Number(digit)) % 97;
  return `DE${String(98 - remainder).padStart(2, '0')}${bban}`;
}

export function nuban(bankCode: string, n: number): string {
  const serial = String(n % 1_000_000_000).padStart(9, '0');
  const weights = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];
  const digits = bankCode.padStart(6, '0') + serial;
  let sum = 0;
  for (let i = 0; i < 15; i++) sum += Number(digits[i]) * (weights[i] as number);
  return serial + String((10 - (sum % 10)) % 10);
}

function row(i: number, senders: number): string {
  const s = i % senders;
  const sender = `SND-${s},person,Sender${s},Family${s},19${50 + (s % 40)}-0${1 + (s % 9)}-1${s % 9},GBR,London,+447400${String(100000 + (s % 900000)).slice(-6)},sender${s}@example.com`;
  const amount = `${1 + (i % 4999)}.${String(i % 100).padStart(2, '0')}`;
  const broken = i % 100 === 99;
  const id = `BENCH-${i}`;
  switch (i % 5) {
    case 0: {
      const [sort, account] = UK_PAIRS[i % UK_PAIRS.length] as [string, string];
      return `${id},bank,USD,GBP,${amount},${sender},person,Alan${i},Turing,GBR,Wilmslow,"${i} Adlington Road, Flat 2",SK9 2BG,+447400${String(200000 + (i % 700000)).slice(-6)},,,${broken ? '12345678' : account},current,${sort},,`;
    }
    case 1:
      return `${id},bank,EUR,EUR,${amount},${sender},person,Emmy${i},Noether,DEU,Berlin,Unter den Linden ${i % 200},10117,+49151${String(10000000 + (i % 89999999)).slice(-8)},,,,,,${broken ? 'DE00370400440532013000' : ibanDE(i)},`;
    case 2:
      return `${id},bank,USD,USD,${amount},${sender},business,Hopper${i},LLC,USA,New York,${i} Fifth Avenue,10118,,,,${100000000 + i},savings,,,${broken ? 'CHAS' : 'CHASUS33'}`;
    case 3:
      return `${id},bank,USD,NGN,${amount},${sender},person,Chinua${i},Achebe,NGA,,,,+234803${String(1000000 + (i % 8999999)).slice(-7)},Guaranty Trust Bank,058,${broken ? '0123456789' : nuban('058', i)},savings,,,`;
    default:
      return `${id},cash,USD,NGN,${amount},${sender},person,Wole${i},Soyinka,NGA,,,,${broken ? '+2342012345678' : `+234805${String(1000000 + (i % 8999999)).slice(-7)}`},,,,,,,`;
  }
}

/** `senders`: how many distinct senders the rows cycle through. */
export async function generateBatch(file: string, rows: number, senders = 5000): Promise<void> {
  const out = createWriteStream(file);
  out.write(`${HEADER.join(',')}\n`);
  let chunk: string[] = [];
  for (let i = 0; i < rows; i++) {
    chunk.push(row(i, senders));
    if (chunk.length === 5000 || i === rows - 1) {
      if (!out.write(`${chunk.join('\n')}\n`)) await once(out, 'drain');
      chunk = [];
    }
  }
  out.end();
  await once(out, 'finish');
}
