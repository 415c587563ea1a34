import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScratchFile } from '../../src/batch/scratch-file.js';
import { BatchRules } from '../../src/validate/batch-rules.js';
import { validateRow } from '../../src/validate/row-rules.js';
import { RULES, validRow } from '../helpers/rows.js';

const dir = mkdtempSync(join(tmpdir(), 'paybatch-scratch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(rows: Record<string, string>[]) {
  const rules = new BatchRules();
  rows.forEach((overrides, index) => {
    const verdict = validateRow(validRow('gbr', overrides), RULES);
    rules.check(index + 2, verdict.values, verdict.amountMinor, verdict.senderFingerprint);
  });
  const late = [...rules.finish()];
  const at = (severity: string) => late.filter((f) => f.severity === severity).map((f) => `${f.line}:${f.issue.code}:${f.issue.message}`);
  return { errors: at('error'), warnings: at('warning') };
}

describe('rules across the rows of a file', () => {
  it('makes the same external_id an error on every line that has it', () => {
    const { errors } = run([{ external_id: 'A' }, { external_id: 'A', output_amount: '5' }, { external_id: 'A', output_amount: '6' }, { external_id: 'B', output_amount: '7' }]);
    expect(errors.sort()).toEqual([
      '2:duplicate_external_id:this external_id is also on line 3; each row needs its own',
      '3:duplicate_external_id:this external_id is also on line 2; each row needs its own',
      '4:duplicate_external_id:this external_id is also on line 2; each row needs its own',
    ]);
  });

  it('tells ids apart that differ in one character, and ignores rows without one', () => {
    const { errors } = run([{ external_id: 'A-1' }, { external_id: 'A-2', output_amount: '5' }, { external_id: 'a-1', output_amount: '6' }]);
    expect(errors).toEqual([]);
  });

  it('warns when the same recipient account gets the same amount twice', () => {
    const { warnings, errors } = run([{ external_id: 'A' }, { external_id: 'B' }, { external_id: 'C', output_amount: '99' }]);
    expect(warnings).toEqual(['3:repeated_payout:the same recipient and amount as line 2: check it is meant to be paid twice']);
    expect(errors).toEqual([]);
  });

  it('warns when one sender_external_id comes with different details than its first row', () => {
    const { warnings } = run([
      { external_id: 'A', output_amount: '1' },
      { external_id: 'B', output_amount: '2' },
      { external_id: 'C', output_amount: '3', sender_last_name: 'King' },
      { external_id: 'D', output_amount: '4', sender_external_id: 'OTHER', sender_last_name: 'Byron' },
    ]);
    expect(warnings).toEqual(['4:sender_details_differ:this sender_external_id has other details than on line 2; the later ones will replace them at the service']);
  });
});

describe('line numbers kept sparsely', () => {
  it('gives back every row\'s line, through shifts from multi-line rows and blank lines', async () => {
    const { LineColumn } = await import('../../src/validate/row-columns.js');
    const lines = [2, 3, 5, 6, 7, 12, 13, 14, 20];
    const column = new LineColumn();
    lines.forEach((line) => column.push(line));
    expect(lines.map((_, row) => column.get(row))).toEqual(lines);
    const plain = new LineColumn();
    for (let row = 0; row < 1000; row++) plain.push(row + 2);
    expect(plain.get(0)).toBe(2);
    expect(plain.get(999)).toBe(1001);
  });
});

describe('keys grouped by partitions that spill', () => {
  /** What sorting every record at once finds: groups of equal keys, in key order, each in row order. */
  function naiveGroups(records: [number, number, number, number, number][]): { rows: number[]; extras: number[] }[] {
    const byKey = new Map<string, [number, number][]>();
    for (const [row, a, b, c, extra] of records) {
      const key = `${a}:${b}:${c}`;
      const members = byKey.get(key) ?? [];
      members.push([row, extra]);
      byKey.set(key, members);
    }
    const keyOf = (key: string): number[] => key.split(':').map(Number);
    return [...byKey.entries()]
      .filter(([, members]) => members.length > 1)
      .sort(([x], [y]) => {
        const [xa, xb, xc] = keyOf(x) as [number, number, number];
        const [ya, yb, yc] = keyOf(y) as [number, number, number];
        return xa - ya || xb - yb || xc - yc;
      })
      .map(([, members]) => ({ rows: members.map(([row]) => row), extras: members.map(([, extra]) => extra) }));
  }

  it('finds the groups that sorting everything at once finds, with most records spilled', async () => {
    const { KeyPartitions, MemorySpill } = await import('../../src/validate/key-partitions.js');
    let seed = 7;
    const random = (below: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % below;
    };
    const firstLanes = [0x12345678, 0x9abcdef0, 0xfedcba98];
    for (const [distinct, firstLane] of [[3, null], [500, null], [40_000, null], [400, firstLanes]] as const) {
      const records: [number, number, number, number, number][] = [];
      // Keys from a small pool, so that groups form; lanes spread over the whole 32 bits (and so over every partition),
      // or first lanes from three only, so that many keys share their first lane and differ in the others.
      const pool = Array.from({ length: distinct }, () => [firstLane ? (firstLane[random(3)] as number) : random(2 ** 32), random(50), random(2)] as const);
      for (let row = 0; row < 60_000; row++) {
        const [a, b, c] = pool[random(distinct)] as readonly [number, number, number];
        records.push([row, a, b, c, random(3)]);
      }
      const spill = new MemorySpill();
      let spilled = 0;
      const counting = { put: (words: Uint32Array) => ((spilled += 1), spill.put(words)), get: spill.get.bind(spill), close: spill.close.bind(spill) };
      const partitions = new KeyPartitions(counting);
      for (const [row, a, b, c, extra] of records) partitions.add(row, a, b, c, extra);
      expect(spilled).toBeGreaterThan(100);
      // Each group read as it comes: its rows are views into memory the next partition's grouping reuses.
      expect(Array.from(partitions.groups(), (group) => ({ rows: Array.from(group.rows), extras: Array.from(group.extras) }))).toEqual(naiveGroups(records));
    }
  });

  it('sorts by the whole key then by row, natively or by comparison past the native limit', async () => {
    const { sortedByKey } = await import('../../src/validate/key-partitions.js');
    let seed = 11;
    const random = (below: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % below;
    };
    const count = 3_000;
    const records = new Uint32Array(count * 5);
    for (let record = 0; record < count; record++) records.set([record, [7, 2 ** 32 - 1, 123_456][random(3)] as number, random(5), random(3), 0], record * 5);
    const key = (record: number): number[] => [1, 2, 3].map((lane) => records[record * 5 + lane] as number);
    const expected = Array.from({ length: count }, (_, record) => record).sort((x, y) => {
      const [kx, ky] = [key(x), key(y)];
      return (kx[0] as number) - (ky[0] as number) || (kx[1] as number) - (ky[1] as number) || (kx[2] as number) - (ky[2] as number) || x - y;
    });
    expect(Array.from(sortedByKey(records, count))).toEqual(expected);
    expect(Array.from(sortedByKey(records, count, 1_000))).toEqual(expected);
  });

  it('finds groups across rows far apart in a large file, through a scratch file', () => {
    const rules = new BatchRules(new ScratchFile(dir));
    const base = validateRow(validRow('gbr', {}), RULES);
    for (let row = 0; row < 50_000; row++) {
      const values = { ...base.values, external_id: row === 49_999 ? 'ID-7' : `ID-${row}`, recipient_iban: `GB${row}` };
      rules.check(row + 2, values, base.amountMinor, base.senderFingerprint);
    }
    expect(readdirSync(dir)).toEqual([]);
    const found = [...rules.finish()].map((f) => `${f.line}:${f.issue.code}`);
    expect(found).toEqual(['9:duplicate_external_id', '50001:duplicate_external_id']);
  });
});

describe('the scratch file', () => {
  it('is made on the first spill only, leaves no name in its folder, and gives back what was put', () => {
    const scratch = new ScratchFile(dir);
    expect(readdirSync(dir)).toEqual([]);
    const first = scratch.put(Uint32Array.from([1, 2, 3]));
    const second = scratch.put(Uint32Array.from([4, 5]));
    expect(readdirSync(dir)).toEqual([]);
    const into = new Uint32Array(2);
    scratch.get(second, into);
    expect(Array.from(into)).toEqual([4, 5]);
    const three = new Uint32Array(3);
    scratch.get(first, three);
    expect(Array.from(three)).toEqual([1, 2, 3]);
    expect(() => scratch.get(second, new Uint32Array(4))).toThrow(/ended at/);
    scratch.close();
    scratch.close();
  });
});
