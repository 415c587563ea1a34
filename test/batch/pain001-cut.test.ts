/**
 * The cutter (pain001-cut.ts) takes a plain transfer whole by its end tag when
 * the text holds it (plainEnd), and follows it tag by tag otherwise: both ways
 * must cut a file into the same pieces, whatever the transfers hold (a tag
 * starting with the transfer's name, its name in a text, its end tag spaced, a
 * comment), in well-formed XML (what is not may be cut otherwise, and is
 * refused either way). Fed whole, most transfers are taken at once; fed a few
 * characters at a time, none is.
 */
import { describe, expect, it } from 'vitest';
import { TransferCutter } from '../../src/batch/iso20022/pain001-cut.js';

type Piece = [string, boolean];

/** The pieces, consecutive text between transfers joined (the cutter tells it as it comes). */
function cut(text: string, size: number): Piece[] {
  const pieces: Piece[] = [];
  const cutter = new TransferCutter(1_000_000);
  const sink = (piece: string, transfer: boolean): void => {
    const last = pieces.at(-1);
    if (!transfer && last && !last[1]) last[0] += piece;
    else pieces.push([piece, transfer]);
  };
  for (let at = 0; at < text.length; at += size) cutter.push(text.slice(at, at + size), sink);
  cutter.end(sink);
  return pieces;
}

const document = (transfers: string): string => `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn><GrpHdr><MsgId>M</MsgId></GrpHdr>`
  + `<PmtInf><PmtInfId>P</PmtInfId>\n${transfers}\n</PmtInf></CstmrCdtTrfInitn></Document>`;

const TRANSFERS = [
  '<CdtTrfTxInf><PmtId><EndToEndId>E1</EndToEndId></PmtId><Amt><InstdAmt Ccy="GBP">1.00</InstdAmt></Amt></CdtTrfTxInf>',
  '<CdtTrfTxInf><RmtInf><Ustrd>about CdtTrfTxInf and </CdtTrfTxInf in words</Ustrd></RmtInf></CdtTrfTxInf>',
  '<CdtTrfTxInf><CdtTrfTxInfX>1</CdtTrfTxInfX></CdtTrfTxInf>',
  '<CdtTrfTxInf><X>1</X><CdtTrfTxInfX/></CdtTrfTxInf>',
  '<CdtTrfTxInf><X>1</X></CdtTrfTxInf ><CdtTrfTxInf/>',
  '<CdtTrfTxInf><!-- </CdtTrfTxInf> --><X>1</X></CdtTrfTxInf>',
  '<CdtTrfTxInf><X a="&lt;/CdtTrfTxInf>">1</X></CdtTrfTxInf>',
  '<p:CdtTrfTxInf xmlns:p="urn:x"><p:X>1</p:X></p:CdtTrfTxInf>',
  '<CdtTrfTxInf><?pi x?><X>1</X></CdtTrfTxInf>',
  '<CdtTrfTxInf><CdtTrfTxInf>nested</CdtTrfTxInf></CdtTrfTxInf>',
];

describe('the transfers\' cutter', () => {
  it.each(TRANSFERS.map((transfer) => [transfer]))('cuts %j alike whole and a few characters at a time', (transfer) => {
    const text = document(`${TRANSFERS[0]}\n${transfer}\n${transfer}${TRANSFERS[0]}`);
    const whole = cut(text, text.length);
    expect(whole.filter(([, transfer]) => transfer).length).toBeGreaterThanOrEqual(3);
    for (const size of [1, 2, 3, 7, 64]) expect(cut(text, size), `by ${size}`).toEqual(whole);
  });
});
