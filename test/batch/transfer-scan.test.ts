/**
 * The transfers' scanner against saxes (as the walk runs it: no namespace
 * processing): on what it reads, the very events saxes gives; on anything
 * saxes refuses, or reads otherwise than as written (entities, CR, a tab in an
 * attribute), it declines, and saxes reads the run.
 */
import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { scanTransfers } from '../../src/batch/iso20022/transfer-scan.js';

type Event = ['open', string, Record<string, string>] | ['text', string] | ['close'];

/** Consecutive texts joined: saxes may split a text where the scanner does not, and the walk joins them. */
function push(events: Event[], event: Event): void {
  const last = events.at(-1);
  if (event[0] === 'text' && last?.[0] === 'text') last[1] += event[1];
  else events.push(event);
}

function bySaxes(text: string): { events: Event[]; error: string | null } {
  const events: Event[] = [];
  let error: string | null = null;
  const parser = new SaxesParser({ position: false });
  parser.on('error', (e) => {
    error ??= e.message;
  });
  parser.on('doctype', () => (error ??= 'doctype'));
  parser.on('processinginstruction', () => (error ??= 'processing instruction'));
  parser.on('opentag', (tag) => push(events, ['open', tag.name, { ...(tag.attributes as Record<string, string>) }]));
  parser.on('text', (chunk) => push(events, ['text', chunk]));
  parser.on('cdata', (chunk) => push(events, ['text', chunk]));
  parser.on('closetag', () => push(events, ['close']));
  parser.write(text);
  parser.close();
  return { events, error };
}

function byScanner(text: string, root?: string): { events: Event[]; read: boolean } {
  const events: Event[] = [];
  const read = scanTransfers(text, {
    openTag: (name, attributes) => push(events, ['open', name, { ...attributes }]),
    addText: (chunk) => push(events, ['text', chunk]),
    closeTag: () => push(events, ['close']),
  }, root);
  return { events, read };
}

const TRANSFER = '<CdtTrfTxInf>\n  <PmtId><EndToEndId>INV-1</EndToEndId></PmtId>\n  <Amt><InstdAmt Ccy="GBP">10.00</InstdAmt></Amt>\n  <Cdtr><Nm>Zoë Müller-Łukasz</Nm></Cdtr>\n</CdtTrfTxInf>';
const wrap = (inner: string): string => `<W>${inner}</W>`;

/** Read by the scanner: plain tags and text. */
const PLAIN = [
  wrap(TRANSFER),
  wrap(TRANSFER + '\n' + TRANSFER),
  wrap('<p:CdtTrfTxInf><p:Amt><p:InstdAmt  Ccy = \'EUR\'   >1.5</p:InstdAmt ></p:Amt></p:CdtTrfTxInf>'),
  wrap('<CdtTrfTxInf><Empty/><Empty2 a="1" /><X a="1" b=\'2\'>t > u ] ]] x</X></CdtTrfTxInf>'),
  wrap('<a.b-c_d><_x>1</_x></a.b-c_d>'),
  wrap(''),
  '<W/>',
];

/** Declined: saxes reads them (otherwise than as written) or refuses them. */
const DECLINED = [
  wrap('<A>Smith &amp; Co</A>'),
  wrap('<A>&#65;</A>'),
  wrap('<A>a\r\nb</A>'),
  wrap('<A><!-- c --></A>'),
  wrap('<A><![CDATA[x</A>]]></A>'),
  wrap('<A><?pi x?></A>'),
  wrap('<!DOCTYPE x><A/>'),
  wrap('<A>x]]>y</A>'),
  wrap('<A>\u0001</A>'),
  wrap('<A>\ud83d\ude00</A>'),
  wrap('<A>\ud800</A>'),
  wrap('<A>\uffff</A>'),
  wrap('<A b="x\ty">1</A>'),
  wrap('<A b="x\ny">1</A>'),
  wrap('<A b="x<y">1</A>'),
  wrap('<A b=x>1</A>'),
  wrap('<A b>1</A>'),
  wrap('<A b="1"c="2">1</A>'),
  wrap('<A b="1" b="2">1</A>'),
  wrap('<A b="1>1</A>'),
  wrap('<A>1</B>'),
  wrap('<A>1</AB>'),
  wrap('<AB>1</A>'),
  wrap('<A>1'),
  wrap('<A>1</A></A>'),
  wrap('</A>'),
  wrap('<1A>1</1A>'),
  wrap('<Ä>1</Ä>'),
  wrap('<a:b:c>1</a:b:c>'),
  wrap('<a:>1</a:>'),
  wrap('<A>1</A x>'),
  wrap('<A/ >'),
  wrap('< A>1</A>'),
  wrap('<A>1</A>') + 'tail',
  wrap('<A>1</A>') + '<W/>',
  'text' + wrap(''),
  '',
];

describe('the transfers\' scanner', () => {
  it.each(PLAIN.map((text) => [text]))('reads %j as saxes does', (text) => {
    const saxes = bySaxes(text);
    expect(saxes.error).toBeNull();
    const scanner = byScanner(text);
    expect(scanner.read).toBe(true);
    expect(scanner.events).toEqual(saxes.events);
  });

  it.each(DECLINED.map((text) => [text]))('declines %j', (text) => {
    expect(byScanner(text).read).toBe(false);
  });

  it('never reads what saxes refuses, nor reads otherwise: every cut of a transfer, and every character put in it', () => {
    const texts: string[] = [];
    for (let at = 0; at <= TRANSFER.length; at++) {
      texts.push(wrap(TRANSFER.slice(0, at)));
      for (const character of ['<', '>', '/', '"', "'", '=', ' ', '&', ':', '!', '?', '\r', ']]>']) texts.push(wrap(TRANSFER.slice(0, at) + character + TRANSFER.slice(at)));
    }
    let read = 0;
    for (const text of texts) {
      const scanner = byScanner(text);
      if (!scanner.read) continue;
      read += 1;
      const saxes = bySaxes(text);
      expect(saxes.error, text).toBeNull();
      expect(scanner.events, text).toEqual(saxes.events);
    }
    // Some of them are still well-formed, plain XML (a space in a text, a '>' in it).
    expect(read).toBeGreaterThan(100);
  });

  it('reads a text inside a root it is given as it reads that text wrapped in the root\'s tags', () => {
    const texts = [...PLAIN, ...DECLINED, 'x</W>', '</W>', '<A/></W><B/>', '<A/></W>tail', 'text', '<'];
    for (let at = 0; at <= TRANSFER.length; at++) {
      texts.push(TRANSFER.slice(0, at));
      for (const character of ['<', '>', '/', '"', '&', '!', '?', ']]>', '</W>', '<W>']) texts.push(TRANSFER.slice(0, at) + character + TRANSFER.slice(at));
    }
    let read = 0;
    for (const text of texts) {
      const inner = text.startsWith('<W>') && text.endsWith('</W>') ? text.slice(3, -4) : text;
      const wrapped = byScanner(wrap(inner));
      const rooted = byScanner(inner, 'W');
      expect(rooted.read, inner).toBe(wrapped.read);
      if (!wrapped.read) continue;
      read += 1;
      expect(rooted.events, inner).toEqual(wrapped.events);
    }
    expect(read).toBeGreaterThan(100);
  });
});
