/**
 * Telling a text file in UTF-8 from what spreadsheets also produce: UTF-16,
 * Windows-1252 or Latin-1, and binary files. Pure functions over bytes.
 */
import { BatchFileError } from './file-error.js';

const RESAVE = 'Re-save it as UTF-8: in Excel, "Save As" and choose "CSV UTF-8 (Comma delimited)"; in LibreOffice, tick "Edit filter settings" and pick "Unicode (UTF-8)"';

/** Looks at the first bytes of a file for UTF-16 and for binary content. */
export function sniffStart(head: Buffer): void {
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    throw new BatchFileError('not_utf8', 1, `the file is UTF-16 text, not UTF-8. ${RESAVE}.`);
  }
  const sample = head.subarray(0, 4096);
  let zeros = 0;
  let evenZeros = 0;
  let controls = 0;
  for (let i = 0; i < sample.length; i++) {
    const byte = sample[i] as number;
    if (byte === 0) {
      zeros += 1;
      if (i % 2 === 1) evenZeros += 1;
    } else if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) {
      controls += 1;
    }
  }
  if (zeros > 0 && evenZeros > sample.length / 4) {
    throw new BatchFileError('not_utf8', 1, `the file looks like UTF-16 text without a byte order mark, not UTF-8. ${RESAVE}.`);
  }
  // NUL bytes are left to the reader, which can tell their line.
  if (controls > sample.length / 100 + 2) throw binaryError(1);
}

export function binaryError(line: number): BatchFileError {
  return new BatchFileError('binary_content', line, `line ${line} has NUL or control bytes: the file is binary, not CSV text (was a spreadsheet (.xlsx) or an archive renamed to .csv?)`);
}

/** Offset of the first byte that breaks UTF-8, or -1. `start` skips bytes that continue a sequence of the previous chunk. */
export function firstInvalidUtf8(bytes: Buffer, start = 0): number {
  let i = start;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    const need = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined) return -1; // cut by the chunk's end: the next chunk decides
      if ((c & 0xc0) !== 0x80) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** A guess at the encoding of bytes that are not UTF-8, for the error message. */
export function guessLegacyEncoding(bytes: Buffer): string {
  // 0x80-0x9F are control codes in Latin-1 but curly quotes, dashes and the euro sign in Windows-1252.
  for (const byte of bytes) if (byte >= 0x80 && byte <= 0x9f) return 'Windows-1252 (what Excel on Windows writes for "CSV (Comma delimited)")';
  return 'ISO-8859-1 (Latin-1) or Windows-1252';
}

export function notUtf8Error(line: number, sample: Buffer): BatchFileError {
  const guess = guessLegacyEncoding(sample);
  return new BatchFileError('not_utf8', line, `the file is not UTF-8: line ${line} has bytes that are not valid UTF-8; it looks like ${guess}. ${RESAVE}, or convert it: iconv -f WINDOWS-1252 -t UTF-8 in.csv > out.csv`);
}

/** The number of line feeds in a string, to keep count of lines as chunks pass. */
export function countLines(text: string): number {
  let count = 0;
  let index = text.indexOf('\n');
  while (index !== -1) {
    count += 1;
    index = text.indexOf('\n', index + 1);
  }
  return count;
}
