/**
 * The pure pieces behind refusing workbooks that attack: the XML bounds
 * (xml-bounds.ts) chunk by chunk, the declared sizes' limits (part-limits.ts),
 * and the zip directory read with its zip64 sizes (zip-directory.ts).
 */
import { describe, expect, it } from 'vitest';
import { BatchFileError } from '../../src/batch/file-error.js';
import { InflateBudget, MAX_MODEL_PART_BYTES, checkDeclaredParts } from '../../src/batch/part-limits.js';
import { MAX_DEPTH, MAX_MARKUP_BYTES, MAX_RECORD_BYTES, MarkupBounds } from '../../src/batch/xml-bounds.js';
import { findDirectory, parseDirectory } from '../../src/batch/zip-directory.js';

const ROW = { depth: 3, name: 'row' };

/** Scans `parts` in turn (each a chunk): the first problem, or null. */
function scan(parts: (string | Buffer)[], record: { depth: number; name: string } | null = ROW) {
  const bounds = new MarkupBounds(record);
  for (const part of parts) {
    const problem = bounds.scan(typeof part === 'string' ? Buffer.from(part) : part);
    if (problem) return problem;
  }
  return null;
}

const spaces = (n: number): Buffer => Buffer.alloc(n, 0x20);

describe('XML bounds', () => {
  it('passes a sheet as Excel writes it, whole or a byte at a time', () => {
    const sheet = '<?xml version="1.0"?>\n<worksheet xmlns="m"><!-- a > b < c --><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t><![CDATA[<x>]]></t></is></c><c r="B1" s="1"/></row></sheetData></worksheet>';
    expect(scan([sheet])).toBeNull();
    expect(scan([...sheet].map((c) => c))).toBeNull();
  });

  it('refuses a text past the bound, even split across chunks, and not one at it', () => {
    expect(scan(['<a>', spaces(MAX_MARKUP_BYTES), '</a>'])).toBeNull();
    expect(scan(['<a>', spaces(MAX_MARKUP_BYTES / 2), spaces(MAX_MARKUP_BYTES / 2 + 1), '</a>'])).toEqual({ code: 'markup_too_large', message: 'holds a text of more than 1048576 bytes (from byte 3)' });
  });

  it('counts a tag with its attributes as one, a ">" inside a quoted value included', () => {
    expect(scan([`<a b="${'>'.repeat(MAX_MARKUP_BYTES)}">`])?.message).toBe('holds a tag, comment or CDATA section of more than 1048576 bytes (from byte 0)');
    expect(scan([`<a b='${'x'.repeat(1000)}>'>`, '</a>'])).toBeNull();
  });

  it('counts a comment, a CDATA section and an instruction whole, whatever "<" and ">" they hold', () => {
    const filler = '<x>'.repeat(MAX_MARKUP_BYTES / 3 + 1);
    for (const [open, close] of [['<!--', '-->'], ['<![CDATA[', ']]>'], ['<?pi ', '?>']]) {
      expect(scan([`<a>${open}`, filler, `${close}</a>`])?.code, open).toBe('markup_too_large');
      expect(scan([`<a>${open}`, '<x>'.repeat(100), `${close}</a>`]), open).toBeNull();
    }
  });

  it('refuses a document type declaration, which no workbook part has (saxes would keep it whole)', () => {
    expect(scan(['<!DOCTYPE x [<!ENTITY a "b">]><x/>'])).toEqual({ code: 'not_a_workbook', message: 'holds a document type declaration or other <! markup, which no workbook part has (at byte 0)' });
  });

  it('refuses elements nested past the bound; empty and closed elements do not nest', () => {
    expect(scan(['<a>'.repeat(MAX_DEPTH) + '<b/>'.repeat(10) + '</a>'.repeat(MAX_DEPTH)])).toBeNull();
    expect(scan(['<a>'.repeat(MAX_DEPTH + 1)])).toEqual({ code: 'markup_too_large', message: `nests elements more than ${MAX_DEPTH} deep (at byte ${3 * MAX_DEPTH})` });
  });

  it('refuses a record (a row, a shared string) past its bound, however short each of its texts', () => {
    const cell = '<c r="A1"><v>1</v></c>';
    const cells = cell.repeat(Math.ceil(MAX_RECORD_BYTES / cell.length));
    expect(scan(['<worksheet><sheetData><row r="1">', cells, '</row></sheetData></worksheet>'])?.message).toBe(`holds a row of more than ${MAX_RECORD_BYTES} bytes (from byte 22)`);
    const run = '<r><t>x</t></r>';
    expect(scan(['<sst><si>', run.repeat(Math.ceil(MAX_RECORD_BYTES / run.length)), '</si></sst>'], { depth: 2, name: 'shared string' })?.message).toBe(`holds a shared string of more than ${MAX_RECORD_BYTES} bytes (from byte 5)`);
    // Many records, each small: no bound on how many.
    expect(scan(['<worksheet><sheetData>', `<row>${cell.repeat(100)}</row>`.repeat(2000), '</sheetData></worksheet>'])).toBeNull();
  });
});

describe('declared sizes', () => {
  const limits = { maxUnpackedBytes: 100 * 1024 * 1024, maxRatio: 50 };
  const part = (name: string, compressedSize: number, uncompressedSize: number) => ({ name, compressedSize, uncompressedSize });

  it('lets through well-packed small parts, and parts at the ratio', () => {
    expect(checkDeclaredParts([part('xl/styles.xml', 10, 1024 * 1024), part('xl/worksheets/sheet1.xml', 1024 * 1024, 50 * 1024 * 1024)], limits)).toBeNull();
  });

  it('refuses a part past the ratio, past the unpacked limit, a loaded part past its own, all parts together, a name twice', () => {
    expect(checkDeclaredParts([part('xl/sharedStrings.xml', 1000, 2 * 1024 * 1024)], limits)?.message).toBe('xl/sharedStrings.xml unpacks to 2097152 bytes from 1000 (2097 times its packed size; the limit is 50 times: batch.max_compression_ratio)');
    expect(checkDeclaredParts([part('xl/sharedStrings.xml', 0, 2 * 1024 * 1024)], limits)?.message).toContain('from 0 (from nothing;');
    expect(checkDeclaredParts([part('xl/media/a.png', 200 * 1024 * 1024, 101 * 1024 * 1024)], limits)?.message).toBe('xl/media/a.png unpacks to 105906176 bytes, over the limit of 104857600 bytes (batch.max_file_bytes)');
    expect(checkDeclaredParts([part('xl/styles.xml', MAX_MODEL_PART_BYTES, MAX_MODEL_PART_BYTES + 1)], limits)?.message).toBe(`xl/styles.xml unpacks to ${MAX_MODEL_PART_BYTES + 1} bytes, over the ${MAX_MODEL_PART_BYTES} bytes such a part may take (it is read whole)`);
    expect(checkDeclaredParts([part('a', 60 * 1024 * 1024, 60 * 1024 * 1024), part('b', 60 * 1024 * 1024, 60 * 1024 * 1024)], limits)?.message).toBe('the workbook\'s parts unpack to 125829120 bytes together, over the limit of 104857600 bytes (batch.max_file_bytes)');
    expect(checkDeclaredParts([part('a', 1, 1), part('a', 1, 1)], limits)).toMatchObject({ code: 'not_a_workbook' });
    for (const error of [checkDeclaredParts([part('xl/sharedStrings.xml', 1000, 2 * 1024 * 1024)], limits)]) expect(error).toMatchObject({ code: 'part_too_large', line: null });
  });

  it('while inflating: a part may not pass what was declared for it, nor all parts their total; a part not listed is refused', () => {
    const budget = new InflateBudget([part('a', 10, 100), part('b', 10, 100)]);
    expect(budget.spend('a', 100, 100, 100)).toBeNull();
    expect(budget.spend('a', 1, 101, 100)?.message).toBe('a unpacks to more than the 100 bytes the archive\'s directory declares for it (the directory lies)');
    expect(budget.allowance('c')).toBeInstanceOf(BatchFileError);
    const again = new InflateBudget([part('a', 10, 100)]);
    expect(again.spend('a', 100, 100, 100)).toBeNull();
    expect(again.spend('a', 1, 1, 100)?.message).toContain('more than the archive\'s directory declares for all of them');
  });
});

describe('the zip directory', () => {
  function entry(name: string, compressed: number, uncompressed: number, extra = Buffer.alloc(0)): Buffer {
    const head = Buffer.alloc(46);
    head.writeUInt32LE(0x02014b50, 0);
    head.writeUInt32LE(compressed, 20);
    head.writeUInt32LE(uncompressed, 24);
    head.writeUInt16LE(name.length, 28);
    head.writeUInt16LE(extra.length, 30);
    return Buffer.concat([head, Buffer.from(name), extra]);
  }

  it('reads each part\'s sizes, zip64 ones from the extra field', () => {
    const zip64 = Buffer.alloc(4 + 16);
    zip64.writeUInt16LE(0x0001, 0);
    zip64.writeUInt16LE(16, 2);
    zip64.writeBigUInt64LE(5n * 1024n ** 3n, 4);
    zip64.writeBigUInt64LE(12345n, 12);
    const directory = Buffer.concat([entry('a.xml', 10, 20), entry('xl/sharedStrings.xml', 0xffffffff, 0xffffffff, zip64)]);
    expect(parseDirectory(directory, 2)).toEqual([
      { name: 'a.xml', compressedSize: 10, uncompressedSize: 20 },
      { name: 'xl/sharedStrings.xml', compressedSize: 12345, uncompressedSize: 5 * 1024 ** 3 },
    ]);
    expect(() => parseDirectory(directory, 3)).toThrow(/its directory is damaged at part 3 of 3/);
  });

  it('finds the end record behind a comment; without one, the archive is cut short', () => {
    const end = Buffer.alloc(22 + 5);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(2, 10);
    end.writeUInt32LE(99, 12);
    end.writeUInt32LE(1000, 16);
    end.writeUInt16LE(5, 20);
    expect(findDirectory(Buffer.concat([Buffer.alloc(40), end]))).toEqual({ at: 1000, size: 99, count: 2 });
    expect(() => findDirectory(Buffer.alloc(100))).toThrow(/cut short/);
  });
});
