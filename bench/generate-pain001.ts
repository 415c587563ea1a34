/**
 * For `bench:validate`: a pain.001.001.09 of any number of credit transfers,
 * and the same rows as a CSV batch (what paybatch maps each transfer to, the
 * sender fields from iso20022.senders written out), both streamed to disk,
 * never held whole. PmtInf blocks of 1,000 transfers, each one of five kinds
 * of payout in turn (UK sort code and account; euros to a German IBAN, funded
 * in euros; a Nigerian NUBAN; Nigerian cash to a mobile; a US business
 * account), some 0.8% of the rows invalid (a check digit, a phone). The
 * control sums are added up exactly (integer cents) in a first pass, since the
 * group header comes before the transfers. A small file of this generator
 * validates against the official XSD (test/fixtures/iso20022/).
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { UK_PAIRS, ibanDE, nuban } from './generate-batch.js';

const BLOCK = 1_000;
/** Each PmtInf block is one kind of payout, the five in turn; the euro block is funded in euros (DbtrAcct/Ccy). */
const KINDS = 5;
const kindOf = (i: number): number => Math.floor(i / BLOCK) % KINDS;
const DEBTOR = 'Acme Trading Ltd';

/** The sender fields a pain.001 does not carry: the benchmark's batch.iso20022 configuration, and the CSV's sender columns. */
export const BENCH_ISO20022 = {
  input_currency: 'USD',
  senders: {
    [DEBTOR]: {
      sender_external_id: 'SND-ACME', sender_type: 'business', sender_birth_date: '2001-04-12', sender_phone_number: '+442079460000',
      sender_country_code: 'GBR', sender_city: 'London', sender_street: '10 Fleet Street', sender_postal_code: 'EC4Y 1AA',
    },
  },
};

const CSV_HEADER = [
  'external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount',
  'sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date', 'sender_country_code', 'sender_city', 'sender_street', 'sender_postal_code', 'sender_phone_number',
  'recipient_type', 'recipient_first_name', 'recipient_last_name', 'recipient_country_code', 'recipient_city', 'recipient_street', 'recipient_postal_code', 'recipient_phone_number',
  'recipient_bank_name', 'recipient_bank_code', 'recipient_bank_account', 'recipient_bank_account_type', 'recipient_sort_code', 'recipient_iban', 'recipient_bic',
];
const s = BENCH_ISO20022.senders[DEBTOR];
const CSV_SENDER = `${s.sender_external_id},${s.sender_type},Acme Trading,Ltd,${s.sender_birth_date},${s.sender_country_code},${s.sender_city},${s.sender_street},${s.sender_postal_code},${s.sender_phone_number}`;

/** Transfer i's amount in cents (1.00 to 4999.99). */
const cents = (i: number): bigint => BigInt((1 + (i % 4999)) * 100 + (i % 100));
const decimal = (value: bigint): string => `${value / 100n}.${String(value % 100n).padStart(2, '0')}`;

interface Transfer {
  xml: string;
  csv: string;
}

function transfer(i: number): Transfer {
  const amount = decimal(cents(i));
  const broken = i % 100 === 99;
  const id = `BENCH-${i}`;
  const head = (ccy: string): string => `<CdtTrfTxInf><PmtId><EndToEndId>${id}</EndToEndId></PmtId><Amt><InstdAmt Ccy="${ccy}">${amount}</InstdAmt></Amt>`;
  switch (kindOf(i)) {
    case 0: {
      const [sort, account] = UK_PAIRS[i % UK_PAIRS.length] as [string, string];
      const mobile = `7400${String(200000 + (i % 700000)).slice(-6)}`;
      return {
        xml: `${head('GBP')}<CdtrAgt><FinInstnId><ClrSysMmbId><ClrSysId><Cd>GBDSC</Cd></ClrSysId><MmbId>${sort}</MmbId></ClrSysMmbId></FinInstnId></CdtrAgt>`
          + `<Cdtr><Nm>Alan${i} Turing</Nm><PstlAdr><StrtNm>${i} Adlington Road</StrtNm><PstCd>SK9 2BG</PstCd><TwnNm>Wilmslow</TwnNm><Ctry>GB</Ctry></PstlAdr><CtctDtls><MobNb>+44-${mobile}</MobNb></CtctDtls></Cdtr>`
          + `<CdtrAcct><Id><Othr><Id>${broken ? '12345678' : account}</Id></Othr></Id></CdtrAcct></CdtTrfTxInf>`,
        csv: `${id},bank,USD,GBP,${amount},${CSV_SENDER},person,Alan${i},Turing,GBR,Wilmslow,${i} Adlington Road,SK9 2BG,+44${mobile},,,${broken ? '12345678' : account},current,${sort},,`,
      };
    }
    case 1: {
      const iban = broken ? 'DE00370400440532013000' : ibanDE(i);
      const mobile = `151${String(10000000 + (i % 89999999)).slice(-8)}`;
      return {
        xml: `${head('EUR')}<CdtrAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></CdtrAgt>`
          + `<Cdtr><Nm>Emmy${i} Noether</Nm><PstlAdr><StrtNm>Unter den Linden ${i % 200}</StrtNm><PstCd>10117</PstCd><TwnNm>Berlin</TwnNm><Ctry>DE</Ctry></PstlAdr><CtctDtls><MobNb>+49-${mobile}</MobNb></CtctDtls></Cdtr>`
          + `<CdtrAcct><Id><IBAN>${iban}</IBAN></Id></CdtrAcct></CdtTrfTxInf>`,
        csv: `${id},bank,EUR,EUR,${amount},${CSV_SENDER},person,Emmy${i},Noether,DEU,Berlin,Unter den Linden ${i % 200},10117,+49${mobile},,,,current,,${iban},COBADEFFXXX`,
      };
    }
    case 2: {
      const account = broken ? '0123456789' : nuban('058', i);
      const mobile = `803${String(1000000 + (i % 8999999)).slice(-7)}`;
      return {
        xml: `${head('NGN')}<CdtrAgt><FinInstnId><ClrSysMmbId><ClrSysId><Cd>NGNIB</Cd></ClrSysId><MmbId>058</MmbId></ClrSysMmbId><Nm>Guaranty Trust Bank</Nm></FinInstnId></CdtrAgt>`
          + `<Cdtr><Nm>Chinua${i} Achebe</Nm><PstlAdr><Ctry>NG</Ctry></PstlAdr><CtctDtls><MobNb>+234-${mobile}</MobNb></CtctDtls></Cdtr>`
          + `<CdtrAcct><Id><Othr><Id>${account}</Id></Othr></Id><Tp><Cd>SVGS</Cd></Tp></CdtrAcct></CdtTrfTxInf>`,
        csv: `${id},bank,USD,NGN,${amount},${CSV_SENDER},person,Chinua${i},Achebe,NGA,,,,+234${mobile},Guaranty Trust Bank,058,${account},savings,,,`,
      };
    }
    case 3: {
      const mobile = broken ? '201234567' : `805${String(1000000 + (i % 8999999)).slice(-7)}`;
      return {
        xml: `${head('NGN')}<Cdtr><Nm>Wole${i} Soyinka</Nm><PstlAdr><Ctry>NG</Ctry></PstlAdr><CtctDtls><MobNb>+234-${mobile}</MobNb></CtctDtls></Cdtr></CdtTrfTxInf>`,
        csv: `${id},cash,USD,NGN,${amount},${CSV_SENDER},person,Wole${i},Soyinka,NGA,,,,+234${mobile},,,,,,,`,
      };
    }
    default: {
      const bic = broken ? 'CHASGB2L' : 'CHASUS33';
      return {
        xml: `${head('USD')}<CdtrAgt><FinInstnId><BICFI>${bic}</BICFI></FinInstnId></CdtrAgt>`
          + `<Cdtr><Nm>Hopper${i} LLC</Nm><PstlAdr><StrtNm>${i} Fifth Avenue</StrtNm><PstCd>10118</PstCd><TwnNm>New York</TwnNm><Ctry>US</Ctry></PstlAdr><Id><OrgId><Othr><Id>EIN-${i}</Id></Othr></OrgId></Id></Cdtr>`
          + `<CdtrAcct><Id><Othr><Id>${100000000 + i}</Id></Othr></Id><Tp><Cd>SVGS</Cd></Tp></CdtrAcct></CdtTrfTxInf>`,
        csv: `${id},bank,USD,USD,${amount},${CSV_SENDER},business,Hopper${i},LLC,USA,New York,${i} Fifth Avenue,10118,,,,${100000000 + i},savings,,,${bic}`,
      };
    }
  }
}

async function put(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

async function close(out: WriteStream): Promise<void> {
  out.end();
  await once(out, 'finish');
}

/** Writes `rows` transfers as a pain.001.001.09 to `xmlFile` and as CSV rows to `csvFile`. */
export async function generatePain001(xmlFile: string, csvFile: string, rows: number): Promise<void> {
  const sums: bigint[] = [];
  for (let i = 0; i < rows; i++) sums[Math.floor(i / BLOCK)] = (sums[Math.floor(i / BLOCK)] ?? 0n) + cents(i);
  const total = sums.reduce((a, b) => a + b, 0n);
  const xml = createWriteStream(xmlFile);
  const csv = createWriteStream(csvFile);
  await put(xml, `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn>`
    + `<GrpHdr><MsgId>BENCH-${rows}</MsgId><CreDtTm>2026-11-27T10:00:00</CreDtTm><NbOfTxs>${rows}</NbOfTxs><CtrlSum>${decimal(total)}</CtrlSum><InitgPty><Nm>${DEBTOR}</Nm></InitgPty></GrpHdr>\n`);
  await put(csv, `${CSV_HEADER.join(',')}\n`);
  for (let block = 0; block * BLOCK < rows; block++) {
    const count = Math.min(BLOCK, rows - block * BLOCK);
    const funding = kindOf(block * BLOCK) === 1 ? 'EUR' : 'USD';
    await put(xml, `<PmtInf><PmtInfId>PMT-${block + 1}</PmtInfId><PmtMtd>TRF</PmtMtd><NbOfTxs>${count}</NbOfTxs><CtrlSum>${decimal(sums[block] as bigint)}</CtrlSum>`
      + `<ReqdExctnDt><Dt>2026-11-28</Dt></ReqdExctnDt><Dbtr><Nm>${DEBTOR}</Nm></Dbtr><DbtrAcct><Id><IBAN>GB33BUKB20201555555555</IBAN></Id><Ccy>${funding}</Ccy></DbtrAcct><DbtrAgt><FinInstnId><BICFI>BUKBGB22</BICFI></FinInstnId></DbtrAgt>\n`);
    const xmlPart: string[] = [];
    const csvPart: string[] = [];
    for (let i = block * BLOCK; i < block * BLOCK + count; i++) {
      const t = transfer(i);
      xmlPart.push(t.xml);
      csvPart.push(t.csv);
    }
    await put(xml, `${xmlPart.join('\n')}\n</PmtInf>\n`);
    await put(csv, `${csvPart.join('\n')}\n`);
  }
  await put(xml, '</CstmrCdtTrfInitn></Document>\n');
  await Promise.all([close(xml), close(csv)]);
}
