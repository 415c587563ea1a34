/**
 * pain.001 files for tests, written by hand (as an ERP that is not SEPA-bound
 * would: any currency, sort codes, bank codes, mobile numbers) or by the `sepa`
 * package, a generator paybatch's code did not write.
 */
import SEPA from 'sepa';

export interface Transfer {
  e2e: string;
  amount: string;
  ccy: string;
  name: string;
  /** Cdtr/PstlAdr: structured. */
  address?: { street: string; town: string; postcode: string; country: string };
  iban?: string;
  account?: string;
  /** CdtrAgt: a BIC, or a clearing system member (GBDSC sort code, or another system's bank code). */
  bic?: string;
  clearing?: { system: string; member: string; bankName?: string };
  /** Cdtr/CtctDtls/MobNb, as ISO writes a phone number: +44-7400123457. */
  mobile?: string;
  email?: string;
  business?: boolean;
  extra?: string;
}

export interface Payment {
  debtor: string;
  currency?: string;
  transfers: Transfer[];
  /** The PmtInf's own NbOfTxs and CtrlSum; computed when absent. */
  count?: string;
  sum?: string;
}

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Exact decimal sum of amounts as strings (no floats), for the control sums. */
export function decimalSum(amounts: string[]): string {
  const scaled = amounts.map((a) => {
    const [whole, fraction = ''] = a.split('.');
    return BigInt(`${whole}${fraction.padEnd(5, '0')}`);
  });
  const total = scaled.reduce((a, b) => a + b, 0n).toString().padStart(6, '0');
  const fraction = total.slice(-5).replace(/0+$/, '');
  return fraction ? `${total.slice(0, -5)}.${fraction}` : total.slice(0, -5);
}

function transferXml(t: Transfer, version: '03' | '09'): string {
  const agent = t.bic !== undefined
    ? `<CdtrAgt><FinInstnId><${version === '03' ? 'BIC' : 'BICFI'}>${t.bic}</${version === '03' ? 'BIC' : 'BICFI'}></FinInstnId></CdtrAgt>`
    : t.clearing ? `<CdtrAgt><FinInstnId><ClrSysMmbId><ClrSysId><Cd>${t.clearing.system}</Cd></ClrSysId><MmbId>${t.clearing.member}</MmbId></ClrSysMmbId>${t.clearing.bankName ? `<Nm>${escape(t.clearing.bankName)}</Nm>` : ''}</FinInstnId></CdtrAgt>` : '';
  const address = t.address ? `<PstlAdr><StrtNm>${escape(t.address.street)}</StrtNm><PstCd>${t.address.postcode}</PstCd><TwnNm>${escape(t.address.town)}</TwnNm><Ctry>${t.address.country}</Ctry></PstlAdr>` : '';
  const id = t.business ? '<Id><OrgId><Othr><Id>ORG-1</Id></Othr></OrgId></Id>' : '';
  const contact = t.mobile || t.email ? `<CtctDtls>${t.mobile ? `<MobNb>${t.mobile}</MobNb>` : ''}${t.email ? `<EmailAdr>${escape(t.email)}</EmailAdr>` : ''}</CtctDtls>` : '';
  const account = t.iban ? `<CdtrAcct><Id><IBAN>${t.iban}</IBAN></Id></CdtrAcct>` : t.account ? `<CdtrAcct><Id><Othr><Id>${t.account}</Id></Othr></Id></CdtrAcct>` : '';
  return `<CdtTrfTxInf><PmtId><EndToEndId>${escape(t.e2e)}</EndToEndId></PmtId><Amt><InstdAmt Ccy="${t.ccy}">${t.amount}</InstdAmt></Amt>${agent}<Cdtr><Nm>${escape(t.name)}</Nm>${address}${id}${contact}</Cdtr>${account}${t.extra ?? ''}</CdtTrfTxInf>`;
}

/** A whole pain.001 document; `group` overrides the header's control totals; `tail` replaces the closing tags. */
export function pain001(version: '03' | '09', payments: Payment[], group: { count?: string; sum?: string; messageId?: string; prolog?: string; tail?: string } = {}): string {
  const all = payments.flatMap((p) => p.transfers);
  const blocks = payments.map((p, i) => {
    const count = p.count ?? String(p.transfers.length);
    const sum = p.sum ?? decimalSum(p.transfers.map((t) => t.amount));
    const account = `<DbtrAcct><Id><IBAN>GB33BUKB20201555555555</IBAN></Id>${p.currency ? `<Ccy>${p.currency}</Ccy>` : ''}</DbtrAcct>`;
    const date = version === '03' ? '<ReqdExctnDt>2026-11-28</ReqdExctnDt>' : '<ReqdExctnDt><Dt>2026-11-28</Dt></ReqdExctnDt>';
    return `<PmtInf><PmtInfId>PMT-${i + 1}</PmtInfId><PmtMtd>TRF</PmtMtd><NbOfTxs>${count}</NbOfTxs><CtrlSum>${sum}</CtrlSum>${date}<Dbtr><Nm>${escape(p.debtor)}</Nm></Dbtr>${account}<DbtrAgt><FinInstnId><${version === '03' ? 'BIC' : 'BICFI'}>BUKBGB22</${version === '03' ? 'BIC' : 'BICFI'}></FinInstnId></DbtrAgt>${p.transfers.map((t) => transferXml(t, version)).join('')}</PmtInf>`;
  });
  const header = `<GrpHdr><MsgId>${group.messageId ?? 'MSG-0001'}</MsgId><CreDtTm>2026-11-27T10:00:00</CreDtTm><NbOfTxs>${group.count ?? all.length}</NbOfTxs><CtrlSum>${group.sum ?? decimalSum(all.map((t) => t.amount))}</CtrlSum><InitgPty><Nm>Acme Trading Ltd</Nm></InitgPty></GrpHdr>`;
  const body = `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.${version}"><CstmrCdtTrfInitn>${header}${blocks.join('')}`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${group.prolog ?? ''}${body}${group.tail ?? '</CstmrCdtTrfInitn></Document>\n'}`;
}

/** A SEPA credit transfer file written by the `sepa` package: EUR, IBANs, unstructured addresses. */
export function sepaFile(version: 'pain.001.001.03' | 'pain.001.001.09', transfers: { name: string; iban: string; bic: string; amount: number; e2e: string; street?: string; city?: string; country?: string }[]): string {
  const doc = new SEPA.Document(version);
  doc.grpHdr.id = 'SEPA-MSG-1';
  doc.grpHdr.created = new Date('2026-11-27T10:00:00Z');
  doc.grpHdr.initiatorName = 'Acme Trading Ltd';
  const info = doc.createPaymentInfo();
  info.requestedExecutionDate = new Date('2026-11-28T00:00:00Z');
  info.debtorIBAN = 'GB33BUKB20201555555555';
  info.debtorBIC = 'BUKBGB22';
  info.debtorName = 'Acme Trading Ltd';
  doc.addPaymentInfo(info);
  for (const t of transfers) {
    const tx = info.createTransaction();
    tx.creditorName = t.name;
    tx.creditorIBAN = t.iban;
    tx.creditorBIC = t.bic;
    tx.amount = t.amount;
    tx.end2endId = t.e2e;
    tx.remittanceInfo = t.e2e;
    if (t.street) tx.creditorStreet = t.street;
    if (t.city) tx.creditorCity = t.city;
    if (t.country) tx.creditorCountry = t.country;
    info.addTransaction(tx);
  }
  return doc.toString();
}

/** The sender defaults for the debtor of these files. */
export const ISO_CONFIG = {
  iso20022: {
    input_currency: 'USD',
    senders: {
      'Acme Trading Ltd': {
        sender_external_id: 'SND-ACME', sender_type: 'business', sender_birth_date: '2001-04-12', sender_phone_number: '+442079460000',
        sender_country_code: 'GBR', sender_city: 'London', sender_street: '10 Fleet Street', sender_postal_code: 'EC4Y 1AA',
      },
    },
  },
};

/** A GBP transfer to a valid UK account (sort code 08-99-99), as ISO writes its mobile number; `extra` overrides any field. */
export const gbpTransfer = (e2e: string, amount: string, extra: Partial<Transfer> = {}): Transfer => ({
  e2e, amount, ccy: 'GBP', name: 'Alan Turing', mobile: '+44-7400123457',
  address: { street: '43 Adlington Road', town: 'Wilmslow', postcode: 'SK9 2BG', country: 'GB' },
  account: '66374958', clearing: { system: 'GBDSC', member: '089999' }, ...extra,
});
