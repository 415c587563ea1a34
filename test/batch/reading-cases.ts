/** Reading real-world batch files: the cases reader.test.ts runs on one thread and reader-parallel.test.ts on worker threads. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readerOptions } from '../../src/batch/batch-options.js';
import { openBatch } from '../../src/batch/reader.js';
import { batchConfig, fileError, validate } from '../helpers/validation.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/batch/${name}`, import.meta.url));

export function readingCases(): void {
  describe('reading real-world batch files', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'paybatch-reader-'));
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));

    it.each(['valid-lf.csv', 'bom-crlf.csv', 'semicolon.csv', 'tab.csv', 'trailing-empty.csv'])('reads %s: 2 valid rows on lines 2 and 3', async (name) => {
      const report = await validate(fixture(name));
      expect(report).toMatchObject({ rows: 2, valid: 2, invalid: 0, errors: [], warnings: [] });
      expect(report.totals).toEqual({ GBP: '156045' });
      expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
    });

    it('detects the delimiter from the header line, or takes it from configuration', async () => {
      expect((await validate(fixture('semicolon.csv'))).delimiter).toBe(';');
      expect((await validate(fixture('tab.csv'))).delimiter).toBe('\t');
      expect((await validate(fixture('valid-lf.csv'))).delimiter).toBe(',');
      const forced = await fileError(fixture('semicolon.csv'), { delimiter: ',' });
      expect(forced.code).toBe('missing_columns');
    });

    it('keeps quoted delimiters, doubled quotes and newlines inside a field, and the line numbers after it', async () => {
      const opened = await openBatch(fixture('quoted-multiline.csv'), readerOptions(batchConfig()));
      const rows = [];
      for await (const row of opened.rows) rows.push(row);
      expect(rows.map((r) => r.line)).toEqual([2, 4]);
      expect(rows[0]?.fields.recipient_street).toBe('Flat 2, "The Old Mill"\n43 Adlington Road');
      const report = await validate(fixture('quoted-multiline.csv'));
      expect(report.errors).toEqual([{ line: 4, column: 'recipient_sort_code', code: 'sort_code_invalid', message: expect.any(String) }]);
    });

    it('matches headers ignoring case, surrounding spaces and spaces for underscores; trims values', async () => {
      const report = await validate(fixture('loose-headers.csv'));
      expect(report).toMatchObject({ rows: 1, valid: 1, warnings: [] });
    });

    it('maps a user\'s own headers from configuration, names errors by the file\'s own column, and warns of unknown columns', async () => {
      expect((await fileError(fixture('own-headers.csv'))).message).toMatch(/lacks required columns: external_id/);
      const mapping = { column_mapping: { 'payment ref': 'external_id', 'Beneficiary Sort Code': 'recipient_sort_code' } };
      const report = await validate(fixture('own-headers.csv'), mapping);
      expect(report).toMatchObject({ rows: 1, valid: 1 });
      expect(report.warnings).toEqual([{ line: 1, column: 'Notes', code: 'unknown_column', message: expect.stringMatching(/"Notes" is not a batch column and is ignored/) }]);
      const file = join(tmp, 'own-bad.csv');
      const text = (await import('node:fs')).readFileSync(fixture('own-headers.csv'), 'utf8').replace('08-99-99', '08-99');
      writeFileSync(file, text);
      expect((await validate(file, mapping)).errors[0]).toMatchObject({ line: 2, column: 'Beneficiary Sort Code', code: 'sort_code_invalid' });
    });

    it('says which encoding a file that is not UTF-8 looks like, on which line, and how to re-save it', async () => {
      const cp1252 = await fileError(fixture('windows-1252.csv'));
      expect(cp1252).toMatchObject({ code: 'not_utf8', line: 3 });
      expect(cp1252.message).toMatch(/Windows-1252/);
      expect(cp1252.message).toMatch(/CSV UTF-8/);
      const latin1 = await fileError(fixture('latin-1.csv'));
      expect(latin1).toMatchObject({ code: 'not_utf8', line: 3 });
      expect(latin1.message).toMatch(/ISO-8859-1/);
      expect(await fileError(fixture('utf16.csv'))).toMatchObject({ code: 'not_utf8', line: 1, message: expect.stringMatching(/UTF-16/) });
    });

    it('finds an invalid UTF-8 byte far into the file, past the first chunk', async () => {
      const good = (await import('node:fs')).readFileSync(fixture('valid-lf.csv'), 'utf8').trimEnd().split('\n');
      const rows = Array.from({ length: 600 }, (_, i) => (good[1] as string).replace('GBR-2026-0001', `GBR-${i}`));
      const file = join(tmp, 'late-bad-byte.csv');
      writeFileSync(file, Buffer.concat([Buffer.from([good[0], ...rows].join('\n') + '\n'), Buffer.from('GBR-X,bank,USD,GBP,1.00,Caf\xe9\n', 'latin1')]));
      expect(await fileError(file)).toMatchObject({ code: 'not_utf8', line: 602 });
    });

    it('finds a file cut in the middle of a character at its very end, past the first chunk, and says what it looks like', async () => {
      const good = (await import('node:fs')).readFileSync(fixture('valid-lf.csv'), 'utf8').trimEnd().split('\n');
      const rows = Array.from({ length: 800 }, (_, i) => (good[1] as string).replace('GBR-2026-0001', `GBR-${i}`));
      const file = join(tmp, 'cut-character.csv');
      // The first of the two bytes of "é", and the file ends: only the decoder's last word finds it.
      writeFileSync(file, Buffer.concat([Buffer.from([good[0], ...rows].join('\n') + '\nGBR-X,bank,USD,GBP,1.00,Caf'), Buffer.from([0xc3])]));
      const error = await fileError(file);
      expect(error).toMatchObject({ code: 'not_utf8', line: 802 });
      expect(error.message).toMatch(/looks like/);
    });

    it('closes a file refused at its header at once, not when its handle is collected', async () => {
      const { readdirSync, readlinkSync } = await import('node:fs');
      const file = join(tmp, 'wrong-header.csv');
      writeFileSync(file, `name,amount\n${'Ada,1.00\n'.repeat(100)}`);
      // The descriptors open on this file, not all of the process's: other test files share the process and open and
      // close sockets meanwhile.
      const open = (): number => readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false;
        }
      }).length;
      for (let i = 0; i < 30; i++) expect((await fileError(file)).code).toBe('missing_columns');
      expect(open()).toBe(0);
    });

    it('refuses binary content and NUL bytes, naming the line', async () => {
      expect(await fileError(fixture('binary.csv'))).toMatchObject({ code: 'binary_content', line: 1 });
      expect(await fileError(fixture('nul-in-row.csv'))).toMatchObject({ code: 'binary_content', line: 3 });
    });

    it('refuses an unclosed quote, naming the line where its row starts', async () => {
      expect(await fileError(fixture('unclosed-quote.csv'))).toMatchObject({ code: 'unclosed_quote', line: 3 });
    });

    it('refuses a misplaced quote', async () => {
      expect(await fileError(fixture('invalid-quote.csv'))).toMatchObject({ code: 'invalid_quote', line: 2 });
    });

    it('refuses a row with a different number of fields', async () => {
      const error = await fileError(fixture('field-count.csv'));
      expect(error).toMatchObject({ code: 'field_count', line: 3 });
      expect(error.message).toBe('line 3: the row has 34 fields, the header has 33');
      // The first row too, and a row far into the file (read in pieces on worker threads, each row is held to the header).
      const [head, ...rows] = (await import('node:fs')).readFileSync(fixture('valid-lf.csv'), 'utf8').trimEnd().split('\n');
      const first = join(tmp, 'first-row-count.csv');
      writeFileSync(first, `${head}\n${rows[0]},extra\n${rows[1]}\n`);
      expect((await fileError(first)).message).toBe('line 2: the row has 34 fields, the header has 33');
      const far = join(tmp, 'far-row-count.csv');
      const many = Array.from({ length: 3000 }, (_, i) => (rows[0] as string).replace(/^[^,]*/, `FAR-${i}`));
      many[2500] = `${many[2500]},extra`;
      writeFileSync(far, `${head}\n${many.join('\n')}\n`);
      expect((await fileError(far)).message).toBe('line 2502: the row has 34 fields, the header has 33');
    });

    it('lists every missing required column at once', async () => {
      const error = await fileError(fixture('missing-columns.csv'));
      expect(error).toMatchObject({ code: 'missing_columns', line: 1 });
      expect(error.message).toMatch(/sender_birth_date, recipient_last_name, output_amount/);
    });

    it('refuses the same column twice, even when spelled differently', async () => {
      const error = await fileError(fixture('duplicate-column.csv'));
      expect(error).toMatchObject({ code: 'duplicate_column', line: 1 });
      expect(error.message).toMatch(/recipient_iban appears twice: column 34 \("Recipient IBAN"\) and column 35 \("recipient iban"\)/);
    });

    it('refuses an empty file, a file of blank lines, and a header with no rows', async () => {
      expect(await fileError(fixture('empty.csv'))).toMatchObject({ code: 'empty_file' });
      expect(await fileError(fixture('blank-lines-only.csv'))).toMatchObject({ code: 'empty_file' });
      expect(await fileError(fixture('header-only.csv'))).toMatchObject({ code: 'no_rows' });
    });

    it('refuses a file, a row or a header over the configured limits', async () => {
      expect(await fileError(fixture('valid-lf.csv'), { max_file_bytes: 100 })).toMatchObject({ code: 'file_too_large' });
      expect(await fileError(fixture('valid-lf.csv'), { max_row_characters: 500 })).toMatchObject({ code: 'row_too_large', line: 1 });
      expect(await fileError(fixture('valid-lf.csv'), { max_columns: 20 })).toMatchObject({ code: 'too_many_columns', line: 1 });
      const huge = join(tmp, 'huge-field.csv');
      const [head, row] = (await import('node:fs')).readFileSync(fixture('valid-lf.csv'), 'utf8').split('\n');
      writeFileSync(huge, `${head}\n${(row as string).replace('Wilmslow', 'W'.repeat(10 * 1024 * 1024))}\n`);
      expect(await fileError(huge)).toMatchObject({ code: 'row_too_large', line: 2 });
    });

    it('refuses a file that cannot be opened', async () => {
      expect(await fileError(join(tmp, 'missing.csv'))).toMatchObject({ code: 'file_unreadable' });
      expect(await fileError(tmp)).toMatchObject({ code: 'file_unreadable' });
    });
  });
}
