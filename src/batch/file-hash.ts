/** SHA-256 of a whole file, streamed: the fingerprint by which a batch is known. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export async function fileSha256(path: string): Promise<string | null> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  } catch {
    return null;
  }
  return hash.digest('hex');
}
