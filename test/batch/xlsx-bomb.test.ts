/**
 * Workbooks that attack (zip bombs), read in this process: a shared strings
 * table or a sheet padded with a gigabyte of spaces (a megabyte packed), an
 * archive whose directory lies about a part's size, a shared string longer
 * than any cell, shared strings past their memory. Each is refused with its
 * code, naming the part and the figures, before the part is inflated (the
 * directory's sizes) or as soon as it passes what was declared or allowed.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { validRow } from '../helpers/rows.js';
import { fileError, validate } from '../helpers/validation.js';
import type { Attack } from '../helpers/xlsx-bomb.js';
import { writeAttackWorkbook } from '../helpers/xlsx-bomb.js';
import { writeZip } from '../../bench/zip-writer.js';

const GIB = 1024 * 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'paybatch-xlsx-bomb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = [validRow('gbr', { external_id: 'BOMB-1' }), validRow('gbr', { external_id: 'BOMB-2', output_amount: '20.00' })];
let files = 0;
async function workbook(attack: Attack = {}): Promise<string> {
  const file = join(dir, `book-${(files += 1)}.xlsx`);
  await writeAttackWorkbook(file, rows, attack);
  return file;
}

describe('workbooks that attack', () => {
  it('the test\'s own archives are real: a padded part inflates to its text and run, and an unpadded workbook reads', async () => {
    const file = join(dir, 'one-part.zip');
    await writeZip(file, [{ name: 'a.xml', text: '<a></a>', fill: { at: 3, byte: 0x20, length: 8 * 1024 * 1024 + 5 } }]);
    const zip = readFileSync(file);
    const packed = zip.readUInt32LE(18);
    const inflated = zlib.inflateRawSync(zip.subarray(30 + 5, 30 + 5 + packed));
    expect(inflated.length).toBe(8 * 1024 * 1024 + 5 + 7);
    expect(inflated.toString('latin1')).toBe(`<a>${' '.repeat(8 * 1024 * 1024 + 5)}</a>`);
    expect(zlib.crc32(inflated)).toBe(zip.readUInt32LE(14));

    const report = await validate(await workbook());
    expect(report).toMatchObject({ rows: 2, valid: 2, errors: [] });
  });

  it('refuses shared strings padded to a gigabyte from their declared sizes, before inflating them', async () => {
    const error = await fileError(await workbook({ pad: { part: 'sharedStrings', bytes: GIB } }));
    expect(error.code).toBe('part_too_large');
    expect(error.message).toMatch(/^xl\/sharedStrings\.xml unpacks to 10737\d{5} bytes from \d+ \(\d+ times its packed size; the limit is 50 times: batch\.max_compression_ratio\)$/);
  }, 60_000);

  it('refuses a sheet padded with a gigabyte of spaces', async () => {
    const error = await fileError(await workbook({ pad: { part: 'sheet', bytes: GIB } }));
    expect(error.code).toBe('part_too_large');
    expect(error.message).toMatch(/^xl\/worksheets\/sheet1\.xml unpacks to 10737\d{5} bytes from \d+ \(\d+ times/);
  }, 60_000);

  it('refuses a part over batch.max_file_bytes unpacked, whatever its ratio', async () => {
    const error = await fileError(await workbook({ pad: { part: 'sheet', bytes: 4 * 1024 * 1024 } }), { max_file_bytes: 2 * 1024 * 1024, max_compression_ratio: 100_000 });
    expect(error).toMatchObject({ code: 'part_too_large', message: expect.stringMatching(/^xl\/worksheets\/sheet1\.xml unpacks to 4\d{6} bytes, over the limit of 2097152 bytes \(batch\.max_file_bytes\)$/) });
  });

  it('stops shared strings that inflate past what a lying directory declares', async () => {
    const error = await fileError(await workbook({ pad: { part: 'sharedStrings', bytes: GIB }, declare: { part: 'sharedStrings', bytes: 2000 } }));
    expect(error).toMatchObject({ code: 'part_too_large', message: 'xl/sharedStrings.xml unpacks to more than the 2000 bytes the archive\'s directory declares for it (the directory lies)' });
  }, 60_000);

  it('stops a sheet, set aside in a temporary file, that inflates past what a lying directory declares', async () => {
    const error = await fileError(await workbook({ pad: { part: 'sheet', bytes: GIB }, declare: { part: 'sheet', bytes: 5000 } }));
    expect(error).toMatchObject({ code: 'part_too_large', message: 'xl/worksheets/sheet1.xml unpacks to more than the 5000 bytes the archive\'s directory declares for it (the directory lies)' });
  }, 60_000);

  it('refuses a part the archive\'s directory does not list', async () => {
    const error = await fileError(await workbook({ unlistedPart: true }));
    expect(error).toMatchObject({ code: 'not_a_workbook', message: 'the file cannot be read as an .xlsx workbook: it holds a part, "xl/hidden.xml", that its directory does not list' });
  });

  it('stops a run of text past 1 MiB in a sheet, even where the ratio is allowed', async () => {
    const error = await fileError(await workbook({ pad: { part: 'sheet', bytes: 64 * 1024 * 1024 } }), { max_compression_ratio: 100_000 });
    expect(error).toMatchObject({ code: 'markup_too_large', message: expect.stringMatching(/^xl\/worksheets\/sheet1\.xml holds a text of more than 1048576 bytes \(from byte \d+\)$/) });
  });

  it('stops a shared string longer than any cell, packed at an ordinary ratio', async () => {
    const text = Array.from(randomBytes(2 * 1024 * 1024), (byte) => String.fromCharCode(97 + (byte % 26))).join('');
    const error = await fileError(await workbook({ longText: text }));
    expect(error).toMatchObject({ code: 'markup_too_large', message: expect.stringMatching(/^xl\/sharedStrings\.xml holds a text of more than 1048576 bytes/) });
  });

  it('leaves no temporary file or open file behind when a part is stopped as it inflates (the daemon reads many)', async () => {
    const lyingSheet = await workbook({ pad: { part: 'sheet', bytes: 64 * 1024 * 1024 }, declare: { part: 'sheet', bytes: 5000 } });
    const lyingStrings = await workbook({ pad: { part: 'sharedStrings', bytes: 64 * 1024 * 1024 }, declare: { part: 'sharedStrings', bytes: 2000 } });
    const spool = mkdtempSync(join(dir, 'spool-'));
    const openFiles = (): number => readdirSync('/proc/self/fd').length;
    const before = openFiles();
    const tmpdirBefore = process.env.TMPDIR;
    process.env.TMPDIR = spool; // where exceljs sets sheets aside
    try {
      for (let i = 0; i < 5; i++) {
        expect(await fileError(lyingSheet)).toMatchObject({ code: 'part_too_large' });
        expect(await fileError(lyingStrings)).toMatchObject({ code: 'part_too_large' });
      }
    } finally {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
    }
    // Closes and deletes finish in the background: waited for, within a bound.
    const cleaned = (): boolean => readdirSync(spool).length === 0 && openFiles() <= before;
    for (const deadline = Date.now() + 10_000; !cleaned() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(readdirSync(spool)).toEqual([]);
    expect(openFiles()).toBeLessThanOrEqual(before);
  });

  it('refuses shared strings past batch.max_shared_strings_bytes', async () => {
    const error = await fileError(await workbook(), { max_shared_strings_bytes: 100 });
    expect(error).toMatchObject({ code: 'shared_strings_too_large', message: expect.stringContaining('more than 100 bytes (batch.max_shared_strings_bytes)') });
    expect(await validate(await workbook(), { max_shared_strings_bytes: 10_000 })).toMatchObject({ rows: 2, valid: 2 });
  });
});
