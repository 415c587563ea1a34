/**
 * The ISO 20022 payment status report (pain.002) answering a pain.001, as text
 * pieces to stream to a file: the group's status, then per payment block each
 * transfer's status (ACSC paid, RJCT ended unpaid, PDNG still in flight) with
 * its ISO reason, in the generation of the pain.001 (.03 answers .03, .10
 * answers .09). Pure: the rows and their transfers in, XML out.
 */
import type { IsoReason } from './iso-status-reasons.js';
import { isoReason } from './iso-status-reasons.js';
import { currencyAmount, decimalNumber, max35, numericCount, requiredMax35 } from './iso-values.js';
import type { ResultRow } from '../store/port.js';
import { resultReason, resultState } from './results.js';
import { isEndedUnsent, isUnpaidFinalState } from '../payout-states.js';

export type TxStatus = 'ACSC' | 'RJCT' | 'PDNG';


/** A row's transfer status, with the reason of a rejection. */
export function transferStatus(row: ResultRow): { status: TxStatus; reason: IsoReason | null } {
  const state = resultState(row);
  if (state === 'paid') return { status: 'ACSC', reason: null };
  // Ended unpaid: invalid, or a transaction's state in which the money did not reach the recipient and will not.
  const ended = state === 'invalid' || isUnpaidFinalState(state) || isEndedUnsent(row.phase) || (row.phase === 'final' && state !== 'paid');
  if (!ended) return { status: 'PDNG', reason: null };
  const { code, reason } = resultReason(row);
  if (row.phase === 'invalid' && row.errors) {
    const [first] = JSON.parse(row.errors) as { column: string; code: string; message: string }[];
    if (first) return { status: 'RJCT', reason: isoReason(first.code, errorWords(first.column, first.message)) };
  }
  return { status: 'RJCT', reason: isoReason(code || state, reason || state) };
}

/**
 * A validation error's words for AddtlInf (105 characters at most): the report
 * names the transfer by its OrgnlEndToEndId already, so the place the batch's
 * messages start with (`PmtInf[1]/CdtTrfTxInf[2] (E2E INV-2): `) is left out,
 * and the element is said once, leaving the room to what is wrong.
 */
export function errorWords(column: string, message: string): string {
  const bare = message.replace(/^PmtInf\[\d+\]\/CdtTrfTxInf\[\d+\](?: \(E2E .*?\))?: /, '');
  return bare.startsWith(`${column}: `) ? bare : `${column}: ${bare}`;
}

/** The group's status from the count of each transfer status: ACSC every one paid, RJCT none accepted, PART some rejected, else ACCP. */
export function groupStatus(counts: Readonly<Record<TxStatus, number>>): 'ACSC' | 'RJCT' | 'PART' | 'ACCP' {
  const total = counts.ACSC + counts.RJCT + counts.PDNG;
  if (total > 0 && counts.ACSC === total) return 'ACSC';
  if (total > 0 && counts.RJCT === total) return 'RJCT';
  if (counts.RJCT > 0) return 'PART';
  return 'ACCP';
}

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** XML 1.0 refuses most control characters even escaped: they never reach the report. */
// eslint-disable-next-line no-control-regex -- these are exactly the characters XML cannot carry
const clean = (text: string): string => escape(text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, ' '));

export interface ReportHeader {
  /** The pain.001's generation: .03 is answered by pain.002.001.03, .09 by .10. */
  version: '03' | '09';
  originalMessageId: string;
  originalCount: string;
  originalSum: string;
  messageId: string;
  createdAt: string;
  counts: Readonly<Record<TxStatus, number>>;
}

/** One answered transfer: the row's result beside the transfer as the file gave it. */
export interface AnsweredTransfer {
  paymentId: string;
  endToEndId: string;
  amount: string;
  currency: string;
  row: ResultRow;
}

/** The report's pieces, in order: stream them to a file. */
export async function* pain002(header: ReportHeader, transfers: AsyncIterable<AnsweredTransfer>): AsyncGenerator<string> {
  const answer = header.version === '03' ? 'pain.002.001.03' : 'pain.002.001.10';
  const original = header.version === '03' ? 'pain.001.001.03' : 'pain.001.001.09';
  yield `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:${answer}">\n<CstmrPmtStsRpt>\n`;
  // Each value the pain.001 gave is fitted to the schema (iso-values.ts): left out, or NOTPROVIDED, when it does not fit.
  const count = numericCount(header.originalCount);
  const sum = decimalNumber(header.originalSum);
  yield `<GrpHdr><MsgId>${clean(requiredMax35(header.messageId))}</MsgId><CreDtTm>${header.createdAt}</CreDtTm><InitgPty><Nm>paybatch</Nm></InitgPty></GrpHdr>\n`;
  yield `<OrgnlGrpInfAndSts><OrgnlMsgId>${clean(requiredMax35(header.originalMessageId))}</OrgnlMsgId><OrgnlMsgNmId>${original}</OrgnlMsgNmId>`
    + `${count === null ? '' : `<OrgnlNbOfTxs>${count}</OrgnlNbOfTxs>`}${sum === null ? '' : `<OrgnlCtrlSum>${sum}</OrgnlCtrlSum>`}<GrpSts>${groupStatus(header.counts)}</GrpSts></OrgnlGrpInfAndSts>\n`;
  let openPayment: string | null = null;
  for await (const transfer of transfers) {
    if (transfer.paymentId !== openPayment) {
      if (openPayment !== null) yield '</OrgnlPmtInfAndSts>\n';
      openPayment = transfer.paymentId;
      yield `<OrgnlPmtInfAndSts><OrgnlPmtInfId>${clean(requiredMax35(transfer.paymentId))}</OrgnlPmtInfId>\n`;
    }
    const { status, reason } = transferStatus(transfer.row);
    const why = reason ? `<StsRsnInf><Rsn><Cd>${reason.code}</Cd></Rsn>${reason.text ? `<AddtlInf>${clean(reason.text)}</AddtlInf>` : ''}</StsRsnInf>` : '';
    const endToEnd = max35(transfer.endToEndId);
    const instructed = currencyAmount(transfer.amount, transfer.currency);
    yield `<TxInfAndSts>${endToEnd === null ? '' : `<OrgnlEndToEndId>${clean(endToEnd)}</OrgnlEndToEndId>`}<TxSts>${status}</TxSts>${why}`
      + `${instructed === null ? '' : `<OrgnlTxRef><Amt><InstdAmt Ccy="${instructed.currency}">${instructed.amount}</InstdAmt></Amt></OrgnlTxRef>`}</TxInfAndSts>\n`;
  }
  if (openPayment !== null) yield '</OrgnlPmtInfAndSts>\n';
  yield '</CstmrPmtStsRpt>\n</Document>\n';
}
