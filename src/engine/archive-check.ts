/**
 * The archive keeps the file that was validated, and paybatch checks that it
 * does: when a batch's file is archived, its SHA-256 is taken again (not only
 * its size and time, which a writer can put back) and compared with the one
 * validated. What was paid is always what was validated (rows come from the
 * store), so a difference means the file holds something that was not paid.
 * Rows added after the file was taken (the bytes validated, then more) are
 * held, never paid by themselves: copied under their header to
 * `NAME.unsent.csv` beside the archived file, for a person to check and drop in
 * the inbox. A `.changed.txt` note says what happened with both fingerprints,
 * and the log raises `archived_file_changed` (a line on standard error).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { fileSha256 } from '../batch/file-hash.js';
import type { BatchRecord } from '../store/port.js';
import { writeFileSafely } from '../workspace/safe-files.js';
import type { PipelineLog } from './pipeline.js';

/** The header is looked for in the first bytes only: a header longer than this is no batch's. */
const HEADER_MAX_BYTES = 64 * 1024;

export interface ArchiveCheckDeps {
  workspace: { home: string };
  log: PipelineLog;
}

/** The bytes after the first `size` when those are the file validated (their SHA-256 is `sha256`); null when it was rewritten. */
async function addedAfter(path: string, size: number, sha256: string): Promise<Buffer | null> {
  const hash = createHash('sha256');
  if (size > 0) for await (const chunk of createReadStream(path, { start: 0, end: size - 1 }) as AsyncIterable<Buffer>) hash.update(chunk);
  if (hash.digest('hex') !== sha256) return null;
  const added: Buffer[] = [];
  for await (const chunk of createReadStream(path, { start: size }) as AsyncIterable<Buffer>) added.push(chunk);
  return Buffer.concat(added);
}

/** The file's first line, with its line end (the header of a CSV batch). */
async function headerLine(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const start = Buffer.alloc(HEADER_MAX_BYTES);
    const { bytesRead } = await handle.read(start, 0, HEADER_MAX_BYTES, 0);
    const end = start.subarray(0, bytesRead).indexOf(0x0a);
    return end === -1 ? Buffer.concat([start.subarray(0, bytesRead), Buffer.from('\n')]) : start.subarray(0, end + 1);
  } finally {
    await handle.close();
  }
}

/**
 * Compares the file about to be archived (`file`, in processing/) with the one
 * validated; on a difference, holds what was added, writes the note beside
 * `archived` and logs it. Nothing when the file is not here (another worker's).
 */
export async function checkBeforeArchiving(deps: ArchiveCheckDeps, batch: BatchRecord, file: string, archived: string): Promise<void> {
  const now = await fileSha256(file);
  if (now === null || now === batch.sha256) return;
  const added = await addedAfter(file, batch.size_bytes, batch.sha256).catch(() => null);
  const lines = added === null ? 0 : added.toString('utf8').split(/\r?\n/).filter((line) => line.length > 0).length;
  let held: string | null = null;
  if (added !== null && lines > 0 && /\.csv$/i.test(batch.file_name)) {
    held = `${archived}.unsent.csv`;
    await writeFileSafely(deps.workspace.home, held, Buffer.concat([await headerLine(file), added]));
  }
  const what = added === null
    ? 'it was rewritten (its first bytes are not the ones validated): compare it with what was paid (the results file) by hand'
    : held !== null
      ? `${lines} line(s) were added after it was taken; they were not paid, and are held in ${held.split('/').pop() ?? held} (under the file's header): check them, and drop that file in the inbox to pay them`
      : `${added.length} byte(s) were added after it was taken; they were not paid: check them by hand`;
  await writeFileSafely(deps.workspace.home, `${archived}.changed.txt`, `${batch.file_name} changed after it was taken in: it was ${batch.size_bytes} bytes with SHA-256 ${batch.sha256}, it is now SHA-256 ${now}.\n${what}.\nWhat was paid is what was validated (the rows kept in paybatch's database); this archived file is not that file.\n`);
  deps.log('archived_file_changed', { batch: batch.id, file: batch.file_name, sha256_validated: batch.sha256, sha256_now: now, ...(held ? { held, lines_held: lines } : {}) });
}
