/**
 * .xlsx files that attack, zipped here by hand: a small valid workbook (one
 * sheet "Payouts", a header and rows as shared strings) whose shared strings
 * or sheet (stored before the shared strings, as Excel stores it) can be padded with a run of one byte inflating to a gigabyte, and
 * whose archive can lie about a part's unpacked size (bench/zip-writer.ts
 * writes the archive; a gigabyte packs to about a megabyte in a second or two).
 */
import { columnLetters } from '../../src/batch/cell-values.js';
import { writeZip } from '../../bench/zip-writer.js';

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DOC_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Where to pad a workbook, and how. */
export interface Attack {
  /** A run of this many spaces: inside the first shared string, or in the sheet right after <sheetData>. */
  pad?: { part: 'sharedStrings' | 'sheet'; bytes: number };
  /** The unpacked size the archive declares for a part, whatever it unpacks to: a lie. */
  declare?: { part: 'sharedStrings' | 'sheet'; bytes: number };
  /** A part stored in the archive before the sheet but left out of its directory. */
  unlistedPart?: boolean;
  /** Extra text for the first shared string (for a long cell): added to the header's first column name. */
  longText?: string;
}

/** A workbook of one sheet "Payouts": `rows` under their header, every cell a shared string; attacked as said. */
export async function writeAttackWorkbook(file: string, rows: readonly Record<string, string>[], attack: Attack = {}): Promise<void> {
  const header = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const strings: string[] = [];
  const index = new Map<string, number>();
  const ref = (text: string): number => {
    if (!index.has(text)) {
      index.set(text, strings.length);
      strings.push(text);
    }
    return index.get(text) as number;
  };
  const table = [header, ...rows.map((row) => header.map((name) => row[name] ?? ''))];
  const sheetRows = table.map((cells, r) => `<row r="${r + 1}">${cells.map((text, c) => `<c r="${columnLetters(c + 1)}${r + 1}" t="s"><v>${ref(text)}</v></c>`).join('')}</row>`);
  const firstString = `<si><t xml:space="preserve">`;
  const sst = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="${MAIN}" count="${strings.length}" uniqueCount="${strings.length}">${strings.map((s, i) => `${firstString}${escape(s)}${i === 0 && attack.longText ? attack.longText : ''}</t></si>`).join('')}</sst>`;
  const sheetHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${MAIN}"><sheetData>`;
  const sheet = `${sheetHead}${sheetRows.join('')}</sheetData></worksheet>`;
  const pad = attack.pad;
  await writeZip(file, [
    { name: '[Content_Types].xml', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>` },
    { name: '_rels/.rels', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>` },
    { name: 'xl/workbook.xml', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="${MAIN}" xmlns:r="${DOC_RELS}"><sheets><sheet name="Payouts" sheetId="1" r:id="rId1"/></sheets></workbook>` },
    { name: 'xl/_rels/workbook.xml.rels', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${DOC_RELS}/sharedStrings" Target="sharedStrings.xml"/></Relationships>` },
    ...(attack.unlistedPart ? [{ name: 'xl/hidden.xml', text: '<hidden/>', unlisted: true }] : []),
    { name: 'xl/worksheets/sheet1.xml', text: sheet, declaredSize: attack.declare?.part === 'sheet' ? attack.declare.bytes : undefined, fill: pad?.part === 'sheet' ? { at: sheetHead.length, byte: 0x20, length: pad.bytes } : undefined },
    {
      name: 'xl/sharedStrings.xml', text: sst, declaredSize: attack.declare?.part === 'sharedStrings' ? attack.declare.bytes : undefined,
      fill: pad?.part === 'sharedStrings' ? { at: sst.indexOf(firstString) + firstString.length, byte: 0x20, length: pad.bytes } : undefined,
    },
  ]);
}
