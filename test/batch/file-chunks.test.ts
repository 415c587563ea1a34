import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileChunks } from '../../src/batch/file-chunks.js';

describe('a file read in pieces into one buffer', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'paybatch-chunks-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('gives every byte once, in order, every piece in the same memory', async () => {
    const bytes = Buffer.alloc(300_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
    const file = join(tmp, 'bytes.bin');
    writeFileSync(file, bytes);
    const copies: Buffer[] = [];
    const memory = new Set<ArrayBufferLike>();
    for await (const piece of fileChunks(file)) {
      copies.push(Buffer.from(piece));
      memory.add(piece.buffer);
    }
    expect(copies.length).toBeGreaterThan(4);
    expect(Buffer.concat(copies).equals(bytes)).toBe(true);
    expect(memory.size).toBe(1);
  });

  it('gives nothing for an empty file, and fails as opening it fails for a missing one', async () => {
    writeFileSync(join(tmp, 'empty.csv'), '');
    const pieces = [];
    for await (const piece of fileChunks(join(tmp, 'empty.csv'))) pieces.push(piece);
    expect(pieces).toEqual([]);
    await expect(fileChunks(join(tmp, 'missing.csv')).next()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
