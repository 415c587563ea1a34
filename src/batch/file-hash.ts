/** SHA-256 of a whole file, streamed: the fingerprint by which a batch is known. */
import { createHash } from 'node:crypto';
import { fileChunks } from './file-chunks.js';

export async function fileSha256(path: string): Promise<string | null> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of fileChunks(path)) hash.update(chunk);
  } catch {
    return null;
  }
  return hash.digest('hex');
}
