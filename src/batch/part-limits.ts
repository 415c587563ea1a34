/**
 * How large a workbook's parts may unpack (pure). An .xlsx file is a zip
 * archive, and a few megabytes of it can inflate to gigabytes (a "zip bomb":
 * a shared strings table or a sheet padded with spaces), which exceljs would
 * set aside on disk or hold in memory. So before anything is inflated, every
 * part the archive's directory declares is checked: at most
 * batch.max_file_bytes unpacked, each part and all of them together, and at
 * most batch.max_compression_ratio times its packed size. The parts exceljs
 * turns into objects whole (the workbook, its styles, relationships) get a
 * tighter bound. While reading, a part may not inflate past what the directory
 * declared for it (see part-guard.ts): a lying directory gets no further.
 */
import { BatchFileError } from './file-error.js';
import type { ZipPart } from './zip-directory.js';

export interface UnpackLimits {
  /** batch.max_file_bytes: any part unpacked, and all of them together. */
  maxUnpackedBytes: number;
  /** batch.max_compression_ratio: unpacked size over packed size, for a part past RATIO_FLOOR_BYTES. */
  maxRatio: number;
}

/** Parts this small pass whatever their ratio: they cannot hurt, and short repetitive XML packs well. */
export const RATIO_FLOOR_BYTES = 1024 * 1024;
/** Excel's largest styles part (64,000 cell formats) is a few megabytes. */
export const MAX_MODEL_PART_BYTES = 16 * 1024 * 1024;

const SHEET = /^xl\/worksheets\/sheet\d+\.xml$/;
const MODEL_PARTS = /^(xl\/workbook\.xml|xl\/styles\.xml|xl\/_rels\/workbook\.xml\.rels|xl\/worksheets\/_rels\/sheet\d+\.xml\.rels)$/;

/** How a part is read: its rows streamed (a sheet, the shared strings), loaded whole by exceljs (a model), or passed over. */
export function partKind(name: string): 'sheet' | 'shared_strings' | 'model' | 'other' {
  if (SHEET.test(name)) return 'sheet';
  if (name === 'xl/sharedStrings.xml') return 'shared_strings';
  return MODEL_PARTS.test(name) ? 'model' : 'other';
}

const refuse = (message: string): BatchFileError => new BatchFileError('part_too_large', null, message);

/** The first part whose declared sizes break a limit, as the error to stop on; null when every part is within them. */
export function checkDeclaredParts(parts: readonly ZipPart[], limits: UnpackLimits): BatchFileError | null {
  const seen = new Set<string>();
  let total = 0;
  for (const { name, compressedSize, uncompressedSize } of parts) {
    if (seen.has(name)) return new BatchFileError('not_a_workbook', null, `the file cannot be read as an .xlsx workbook: its directory lists ${name} twice`);
    seen.add(name);
    if (uncompressedSize > RATIO_FLOOR_BYTES && uncompressedSize > limits.maxRatio * compressedSize) {
      const ratio = compressedSize === 0 ? 'from nothing' : `${Math.floor(uncompressedSize / compressedSize)} times its packed size`;
      return refuse(`${name} unpacks to ${uncompressedSize} bytes from ${compressedSize} (${ratio}; the limit is ${limits.maxRatio} times: batch.max_compression_ratio)`);
    }
    if (uncompressedSize > limits.maxUnpackedBytes) {
      return refuse(`${name} unpacks to ${uncompressedSize} bytes, over the limit of ${limits.maxUnpackedBytes} bytes (batch.max_file_bytes)`);
    }
    if (partKind(name) === 'model' && uncompressedSize > MAX_MODEL_PART_BYTES) {
      return refuse(`${name} unpacks to ${uncompressedSize} bytes, over the ${MAX_MODEL_PART_BYTES} bytes such a part may take (it is read whole)`);
    }
    total += uncompressedSize;
  }
  if (total > limits.maxUnpackedBytes) {
    return refuse(`the workbook's parts unpack to ${total} bytes together, over the limit of ${limits.maxUnpackedBytes} bytes (batch.max_file_bytes)`);
  }
  return null;
}

/**
 * What each part may inflate to while it is read: what the directory declared
 * for it (checked above). A part the directory does not list may not be read
 * at all, and every part read, under whatever name and however often, counts
 * against the declared total.
 */
export class InflateBudget {
  private readonly declared = new Map<string, number>();
  private left: number;

  constructor(parts: readonly ZipPart[]) {
    let total = 0;
    for (const part of parts) {
      this.declared.set(part.name, part.uncompressedSize);
      total += part.uncompressedSize;
    }
    this.left = total;
  }

  /** The most `name` may inflate to, or the error when the directory does not list it. */
  allowance(name: string): number | BatchFileError {
    const declared = this.declared.get(name);
    if (declared === undefined) return new BatchFileError('not_a_workbook', null, `the file cannot be read as an .xlsx workbook: it holds a part, ${JSON.stringify(name)}, that its directory does not list`);
    return declared;
  }

  /** Counts `bytes` inflated of `name` (`sofar` of it in all): the error once past its allowance or the total. */
  spend(name: string, bytes: number, sofar: number, allowance: number): BatchFileError | null {
    this.left -= bytes;
    if (sofar > allowance) return refuse(`${name} unpacks to more than the ${allowance} bytes the archive's directory declares for it (the directory lies)`);
    if (this.left < 0) return refuse(`the workbook's parts unpack to more than the archive's directory declares for all of them (the directory lies)`);
    return null;
  }
}
