/**
 * A large .xlsx of cash payouts to Nigeria, written as Excel saves a workbook:
 * every text a shared string (xl/sharedStrings.xml, stored after the sheet),
 * amounts as number cells, the sender's birth date as a date serial with a
 * `yyyy-mm-dd` style (xl/styles.xml). Zipped by hand (zip-writer.ts), in a
 * second or two for 100,000 rows where exceljs's streaming writer took some
 * twenty: for bench:validate and the test of a huge sheet.
 */
import { columnLetters } from '../src/batch/cell-values.js';
import { writeZip } from './zip-writer.js';

export const PAYOUT_SHEET_HEADER = [
  'external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount',
  'sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date', 'sender_country_code', 'sender_phone_number',
  'recipient_first_name', 'recipient_last_name', 'recipient_country_code', 'recipient_phone_number',
];

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DOC_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** 1985-12-10 as Excel counts days (from 1899-12-30). */
const BIRTH_SERIAL = (Date.UTC(1985, 11, 10) - Date.UTC(1899, 11, 30)) / 86_400_000;
/** The cell style of a date: the second of styles.xml's cellXfs. */
const DATE_STYLE = 1;

type Cell = string | number | { date: number };

function payoutRow(i: number): Cell[] {
  return [
    `HUGE-${i}`, 'cash', 'USD', 'NGN', 1000 + (i % 5000) / 100,
    `SND-${i % 5000}`, 'person', 'Ada', `Lovelace ${i % 5000}`, { date: BIRTH_SERIAL }, 'GBR', '+447400123456',
    `Wole ${i}`, 'Soyinka', 'NGA', `+234803${1_000_000 + i}`,
  ];
}

/** Writes `rows` valid payouts (external ids HUGE-0 on) under the header, on a sheet "Payouts". */
export async function writePayoutSheet(file: string, rows: number): Promise<void> {
  const strings: string[] = [];
  const index = new Map<string, number>();
  const shared = (text: string): number => {
    let at = index.get(text);
    if (at === undefined) {
      at = strings.length;
      index.set(text, at);
      strings.push(text);
    }
    return at;
  };
  let references = 0;
  const cell = (value: Cell, ref: string): string => {
    if (typeof value === 'number') return `<c r="${ref}"><v>${value}</v></c>`;
    if (typeof value === 'object') return `<c r="${ref}" s="${DATE_STYLE}"><v>${value.date}</v></c>`;
    references += 1;
    return `<c r="${ref}" t="s"><v>${shared(value)}</v></c>`;
  };
  const columns = PAYOUT_SHEET_HEADER.map((_, c) => columnLetters(c + 1));
  const line = (cells: Cell[], r: number): string => `<row r="${r}">${cells.map((value, c) => cell(value, `${columns[c]}${r}`)).join('')}</row>`;
  const sheetRows: string[] = [line(PAYOUT_SHEET_HEADER, 1)];
  for (let i = 0; i < rows; i++) sheetRows.push(line(payoutRow(i), i + 2));
  const sheet = `${XML}<worksheet xmlns="${MAIN}"><dimension ref="A1:${columns.at(-1)}${rows + 1}"/><sheetData>${sheetRows.join('')}</sheetData></worksheet>`;
  const sst = `${XML}<sst xmlns="${MAIN}" count="${references}" uniqueCount="${strings.length}">${strings.map((s) => `<si><t>${escape(s)}</t></si>`).join('')}</sst>`;
  const styles = `${XML}<styleSheet xmlns="${MAIN}"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>`
    + '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
    + '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    + '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
    + '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>';
  const type = (part: string): string => `application/vnd.openxmlformats-officedocument.spreadsheetml.${part}+xml`;
  await writeZip(file, [
    {
      name: '[Content_Types].xml',
      text: `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>`
        + `<Override PartName="/xl/workbook.xml" ContentType="${type('sheet.main')}"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="${type('worksheet')}"/>`
        + `<Override PartName="/xl/sharedStrings.xml" ContentType="${type('sharedStrings')}"/><Override PartName="/xl/styles.xml" ContentType="${type('styles')}"/></Types>`,
    },
    { name: '_rels/.rels', text: `${XML}<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>` },
    { name: 'xl/workbook.xml', text: `${XML}<workbook xmlns="${MAIN}" xmlns:r="${DOC_RELS}"><sheets><sheet name="Payouts" sheetId="1" r:id="rId1"/></sheets></workbook>` },
    {
      name: 'xl/_rels/workbook.xml.rels',
      text: `${XML}<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/worksheet" Target="worksheets/sheet1.xml"/>`
        + `<Relationship Id="rId2" Type="${DOC_RELS}/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rId3" Type="${DOC_RELS}/styles" Target="styles.xml"/></Relationships>`,
    },
    { name: 'xl/styles.xml', text: styles },
    { name: 'xl/worksheets/sheet1.xml', text: sheet },
    { name: 'xl/sharedStrings.xml', text: sst },
  ], 1);
}
