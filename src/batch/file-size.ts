/** The size check every batch file passes before a byte of it is read, whatever its format. */
import { stat } from 'node:fs/promises';
import { BatchFileError } from './file-error.js';

export const tooLarge = (size: number, max: number): BatchFileError =>
  new BatchFileError('file_too_large', null, `the file is ${size} bytes, over the limit of ${max} bytes (batch.max_file_bytes)`);

/** The file's size, once it is known to be a regular file, not empty and within the limit. */
export async function checkSize(path: string, maxFileBytes: number): Promise<number> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new BatchFileError('file_unreadable', null, `${path} is not a regular file`);
    size = info.size;
  } catch (error) {
    if (error instanceof BatchFileError) throw error;
    throw new BatchFileError('file_unreadable', null, `cannot read the file: ${(error as Error).message}`);
  }
  if (size > maxFileBytes) throw tooLarge(size, maxFileBytes);
  if (size === 0) throw new BatchFileError('empty_file', null, 'the file is empty');
  return size;
}
