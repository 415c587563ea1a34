/**
 * An .xlsx file opened for exceljs: a zip archive (sniffed), whose directory
 * declares no part over the limits on unpacked size and compression ratio
 * (part-limits.ts), its bytes hashed as they are read and every part watched
 * as it inflates (part-guard.ts), so that a part lying about its size is
 * stopped where it passes what it declared, and the sheets exceljs sets aside
 * on the way noted, to be cleaned up if the read is given up.
 */
import { BatchFileError } from './file-error.js';
import { checkSize } from './file-size.js';
import type { ReaderOptions } from './opened-batch.js';
import { guardParts } from './part-guard.js';
import { InflateBudget, checkDeclaredParts } from './part-limits.js';
import { SpooledSheets } from './sheet-spool.js';
import { HashedBytes, sniffWorkbook } from './workbook-source.js';
import type { ZipPart } from './zip-directory.js';
import { readZipDirectory } from './zip-directory.js';

async function declaredParts(path: string, size: number): Promise<ZipPart[]> {
  try {
    return await readZipDirectory(path, size);
  } catch (error) {
    if (error instanceof BatchFileError) throw error;
    throw new BatchFileError('file_unreadable', null, `cannot read the file: ${(error as Error).message}`);
  }
}

export interface Archive {
  bytes: HashedBytes;
  spooled: SpooledSheets;
}

export async function openArchive(path: string, options: ReaderOptions): Promise<Archive> {
  const size = await checkSize(path, options.maxFileBytes);
  await sniffWorkbook(path);
  const parts = await declaredParts(path, size);
  const refused = checkDeclaredParts(parts, { maxUnpackedBytes: options.maxFileBytes, maxRatio: options.maxCompressionRatio });
  if (refused) throw refused;
  const budget = new InflateBudget(parts);
  const spooled = new SpooledSheets();
  const bytes: HashedBytes = new HashedBytes(path, options.maxFileBytes, (zip) => guardParts(zip, budget, {
    refuse: (error) => bytes.fail(error),
    spooled: (sheet) => spooled.add(sheet),
  }));
  return { bytes, spooled };
}
