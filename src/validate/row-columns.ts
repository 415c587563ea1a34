/**
 * Line numbers by row, stored as the few points where they stop being
 * `row + first line` (a field with line breaks, skipped blank lines): usually
 * nothing at all, instead of four bytes a row.
 */
export class LineColumn {
  private readonly rows: number[] = [];
  private readonly shifts: number[] = [];
  private shift = 0;
  length = 0;

  push(line: number): void {
    const shift = line - this.length;
    if (shift !== this.shift) {
      this.rows.push(this.length);
      this.shifts.push(shift);
      this.shift = shift;
    }
    this.length += 1;
  }

  get(row: number): number {
    let low = 0;
    let high = this.rows.length - 1;
    let shift = 0;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if ((this.rows[mid] as number) <= row) {
        shift = this.shifts[mid] as number;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return row + shift;
  }
}

/**
 * Three independent 32-bit FNV-1a style lanes over some strings, with a
 * separator after each, written into `FINGERPRINT` (no allocation: this runs
 * several times for every row of a batch).
 */
export const FINGERPRINT = new Uint32Array(3);

let laneA = 0;
let laneB = 0;
let laneC = 0;

function begin(): void {
  laneA = 0x811c9dc5;
  laneB = 0x01000193;
  laneC = 0x9747b28c;
}

function mix(text: string | undefined): void {
  const value = text ?? '';
  let a = laneA;
  let b = laneB;
  let c = laneC;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
    c = Math.imul(c ^ code, 0x27d4eb2f);
  }
  laneA = Math.imul(a ^ 0x1f, 0x01000193);
  laneB = Math.imul(b ^ 0x1f, 0x5bd1e995);
  laneC = Math.imul(c ^ 0x1f, 0x27d4eb2f);
}

function end(): Uint32Array {
  FINGERPRINT[0] = laneA;
  FINGERPRINT[1] = laneB;
  FINGERPRINT[2] = laneC;
  return FINGERPRINT;
}

export function fingerprintOf(...parts: (string | undefined)[]): Uint32Array {
  begin();
  for (let p = 0; p < parts.length; p++) mix(parts[p]);
  return end();
}

/** The same over the values of some fields of an object, without building a list of them. */
export function fingerprintFields<T extends Record<string, string | undefined>>(values: T, fields: readonly (keyof T)[]): Uint32Array {
  begin();
  for (let f = 0; f < fields.length; f++) mix(values[fields[f] as keyof T]);
  return end();
}
