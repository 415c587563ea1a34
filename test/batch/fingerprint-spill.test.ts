import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FingerprintSpill } from '../../src/batch/fingerprint-spill.js';
import { ScratchFile } from '../../src/batch/scratch-file.js';
import { DiskError, ExitCode } from '../../src/errors.js';
import { MemorySpill } from '../../src/validate/key-partitions.js';
import type { Spill } from '../../src/validate/key-partitions.js';

const dir = mkdtempSync(join(tmpdir(), 'paybatch-spill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A scratch file double that counts what reaches it, and refuses from its `refuseFrom`-th put on (as a full disk would). */
function countingFile(refuseFrom = Infinity): Spill & { puts: number } {
  const inner = new MemorySpill();
  const file = {
    puts: 0,
    put(words: Uint32Array): number {
      if (file.puts >= refuseFrom) throw new Error('ENOSPC: no space left on device, write');
      file.puts += 1;
      return inner.put(words);
    },
    get: (at: number, into: Uint32Array) => inner.get(at, into),
    close: () => inner.close(),
  };
  return file;
}

const words = (n: number): Uint32Array => Uint32Array.from({ length: 4 }, (_, i) => n * 10 + i);

describe('the spill of a batch\'s fingerprints', () => {
  it('keeps what fits the budget in memory, shared by every caller, and only then writes to the scratch file', () => {
    const file = countingFile();
    const spill = new FingerprintSpill(() => expect.fail('not refused'), 3 * 16, file);
    const at = [1, 2, 3, 4, 5].map((n) => spill.put(words(n)));
    expect(file.puts).toBe(2);
    for (const [i, place] of at.entries()) {
      const into = new Uint32Array(4);
      spill.get(place, into);
      expect(Array.from(into)).toEqual(Array.from(words(i + 1)));
    }
  });

  it('keeps its own copy: the caller reuses its buffer', () => {
    const spill = new FingerprintSpill(() => {}, 2 * 1024 * 1024, countingFile());
    const buffer = words(1);
    const at = spill.put(buffer);
    buffer.fill(0);
    const into = new Uint32Array(4);
    spill.get(at, into);
    expect(Array.from(into)).toEqual(Array.from(words(1)));
  });

  it('keeps everything in memory once the scratch file is refused, says so once, and gives back what the file took before', () => {
    const file = countingFile(2);
    const refusals: string[] = [];
    const spill = new FingerprintSpill((reason) => refusals.push(reason), 16, file);
    const at = [1, 2, 3, 4, 5, 6].map((n) => spill.put(words(n)));
    expect(file.puts).toBe(2);
    expect(refusals).toEqual(['ENOSPC: no space left on device, write']);
    for (const [i, place] of at.entries()) {
      const into = new Uint32Array(4);
      spill.get(place, into);
      expect(Array.from(into)).toEqual(Array.from(words(i + 1)));
    }
  });

  it('carries on in memory when the temporary folder is missing, with the folder named in the reason', () => {
    const refusals: string[] = [];
    const spill = new FingerprintSpill((reason) => refusals.push(reason), 0, new ScratchFile(join(dir, 'missing')));
    const at = spill.put(words(7));
    spill.put(words(8));
    const into = new Uint32Array(4);
    spill.get(at, into);
    expect(Array.from(into)).toEqual(Array.from(words(7)));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(/cannot make the scratch file for the rules across rows in .*missing \(the temporary folder; TMPDIR sets another\): ENOENT/);
    spill.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a read of the scratch file the disk refuses (EIO) is a DiskError, exit 74, naming the file and its folder: those fingerprints are nowhere else', () => {
    // The reader the scratch file is given fails as a failing disk does; making and writing the file are real.
    const reads: number[] = [];
    const failingDisk = (fd: number): number => {
      reads.push(fd);
      throw Object.assign(new Error('EIO: i/o error, read'), { errno: -5, code: 'EIO', syscall: 'read' });
    };
    const spill = new FingerprintSpill(() => expect.fail('the scratch file was made and written: nothing to keep in memory'), 0, new ScratchFile(dir, failingDisk));
    const at = spill.put(words(1));
    let thrown: unknown;
    try {
      spill.get(at, new Uint32Array(4));
    } catch (error) {
      thrown = error;
    }
    expect(reads).toHaveLength(1);
    expect(thrown).toBeInstanceOf(DiskError);
    expect(thrown).toMatchObject({
      exitCode: ExitCode.ioError,
      message: `cannot read the scratch file for the rules across rows in ${dir} (the temporary folder; TMPDIR sets another): EIO: i/o error, read`,
      cause: { code: 'EIO' },
    });
    spill.close();
    expect(readdirSync(dir)).toEqual([]);
  });
});
