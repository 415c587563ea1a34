/**
 * The file archived is compared with the one validated by its SHA-256, not by
 * its size and time alone: rows added after it was taken are held in
 * NAME.unsent.csv (never paid by themselves), a rewrite of the same size with
 * its time put back is still caught, and an unchanged file leaves nothing.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkBeforeArchiving } from '../../src/engine/archive-check.js';
import type { BatchRecord } from '../../src/store/port.js';

const TAKEN = 'external_id,output_amount\nA-1,987.65\nA-2,10.00\n';

describe('the file compared with the one validated when archived', () => {
  let dir: string;
  let logs: { event: string; fields: Record<string, unknown> }[];
  const file = (): string => join(dir, 'processing', 'f.csv');
  const archived = (): string => join(dir, 'archive', 'f.csv');
  const batch = { id: 'B20261127-00000001', file_name: 'f.csv', size_bytes: Buffer.byteLength(TAKEN), sha256: createHash('sha256').update(TAKEN).digest('hex') } as BatchRecord;
  const check = () => checkBeforeArchiving({ workspace: { home: dir }, log: (event, fields) => logs.push({ event, fields }) }, batch, file(), archived());

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-archive-check-'));
    for (const folder of ['processing', 'archive']) mkdirSync(join(dir, folder));
    writeFileSync(file(), TAKEN);
    logs = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('unchanged: no note, no log line', async () => {
    await check();
    expect(readdirSync(join(dir, 'archive'))).toEqual([]);
    expect(logs).toEqual([]);
  });

  it('rows added after it was taken: held under the header, with a note and a log line', async () => {
    appendFileSync(file(), 'A-3,5.00\nA-4,6.00\n');
    await check();
    expect(readFileSync(`${archived()}.unsent.csv`, 'utf8')).toBe('external_id,output_amount\nA-3,5.00\nA-4,6.00\n');
    expect(readFileSync(`${archived()}.changed.txt`, 'utf8')).toMatch(/2 line\(s\) were added after it was taken; they were not paid, and are held in f\.csv\.unsent\.csv/);
    expect(logs).toEqual([{ event: 'archived_file_changed', fields: expect.objectContaining({ batch: batch.id, held: `${archived()}.unsent.csv`, lines_held: 2 }) }]);
  });

  it('rewritten with the same size and its time put back: still caught, noted as a rewrite, nothing held', async () => {
    const { atime, mtime } = statSync(file());
    writeFileSync(file(), TAKEN.replace('987.65', '198.65'));
    utimesSync(file(), atime, mtime);
    await check();
    expect(readdirSync(join(dir, 'archive'))).toEqual(['f.csv.changed.txt']);
    expect(readFileSync(`${archived()}.changed.txt`, 'utf8')).toMatch(/it was rewritten/);
    expect(logs.map((l) => l.event)).toEqual(['archived_file_changed']);
  });
});
