/**
 * Where a batch's fingerprints for the rules across rows go once a partition's
 * buffer is full (see validate/key-partitions.ts): memory first, up to one
 * budget shared by every partition, so that a file of some tens of thousands of
 * rows never touches the disk, whatever its keys (one sender on every row fills
 * a single partition); past the budget, a scratch file.
 *
 * A scratch file the system refuses (TMPDIR missing or not writable, the disk
 * full) is not a reason to leave a batch unread, nor the other files and the
 * payouts in flight behind it: what would have gone to it stays in memory
 * instead (about 60 bytes a row), and `refused` is told once, to say so.
 * Reading back what the file did take can still fail (an I/O error of the
 * disk): that is a DiskError, since those fingerprints are nowhere else.
 */
import type { Spill } from '../validate/key-partitions.js';
import { ScratchFile } from './scratch-file.js';

export class FingerprintSpill implements Spill {
  /** Each put's place: its words when kept in memory, its offset when in the scratch file. */
  private readonly places: (Uint32Array | number)[] = [];
  private inMemory = 0;
  private fileRefused = false;

  /**
   * `budget`: bytes of full buffers kept in memory before the scratch file is made (batch.scratch_after_bytes: 2 MB
   * by default, 400 buffers of 256 records; the tests set 0, to reach the scratch file with a few hundred rows).
   */
  constructor(
    private readonly refused: (reason: string) => void,
    private readonly budget: number,
    private readonly file: Spill = new ScratchFile(),
  ) {}

  put(words: Uint32Array): number {
    this.places.push(this.keep(words));
    return this.places.length - 1;
  }

  private keep(words: Uint32Array): Uint32Array | number {
    if (this.fileRefused || this.inMemory + words.byteLength <= this.budget) {
      this.inMemory += words.byteLength;
      return words.slice();
    }
    try {
      return this.file.put(words);
    } catch (error) {
      this.fileRefused = true;
      this.refused((error as Error).message);
      return this.keep(words);
    }
  }

  get(at: number, into: Uint32Array): void {
    const place = this.places[at];
    if (place === undefined) throw new Error(`nothing was put at ${at}`);
    if (typeof place === 'number') this.file.get(place, into);
    else into.set(place);
  }

  close(): void {
    this.places.length = 0;
    this.inMemory = 0;
    this.file.close();
  }
}
