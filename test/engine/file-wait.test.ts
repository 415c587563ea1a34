/** What `run` says of a file it waits for (engine/file-wait.ts), and when it looks again (workspace/arrival.ts). Pure. */
import { describe, expect, it } from 'vitest';
import { clockTime } from '../../src/engine/batch-stage.js';
import { fileWait, lookAgainInMs, mayBeTakenBy } from '../../src/engine/file-wait.js';
import type { ArrivalPolicy, Seen } from '../../src/workspace/arrival.js';
import { readiness } from '../../src/workspace/arrival.js';

const T0 = Date.parse('2026-11-27T12:04:16Z');
const policy: ArrivalPolicy = { stableMs: 15_000, marker: 'optional', manifest: 'optional' };
const seen = (over: Partial<Seen> = {}): Seen => ({ size: 100, mtimeMs: 1, endsWithLineEnd: true, marker: false, manifest: false, since: T0, ...over });

describe('the wait for a file to be whole, in words', () => {
  it('a whole file without a marker: until when, and the marker that takes it at once', () => {
    const wait = fileWait('pay.csv', seen(), policy);
    expect(wait.readyAt).toBe(T0 + 15_000);
    expect(wait.line).toBe(`waiting until ${clockTime(T0 + 15_000)} for inbox/pay.csv to stay unchanged (no completion marker; write pay.csv.done to take it at once)`);
  });

  it('a file cut mid-line: four times as long, and the marker once it is whole', () => {
    const wait = fileWait('pay.csv', seen({ endsWithLineEnd: false }), policy);
    expect(wait.readyAt).toBe(T0 + 60_000);
    expect(wait.line).toBe(`waiting until ${clockTime(T0 + 60_000)} for inbox/pay.csv to end whole and stay unchanged (its last line has no line end yet; once it is whole, write pay.csv.done to take it at once)`);
  });

  it('a required marker or manifest: waited for, not a time', () => {
    expect(fileWait('pay.csv', seen(), { ...policy, marker: 'required' })).toEqual({ line: "waiting for inbox/pay.csv's completion marker pay.csv.done: intake.marker is required", readyAt: null });
    expect(fileWait('pay.xlsx', seen(), { ...policy, manifest: 'required' }).line).toBe("waiting for inbox/pay.xlsx's manifest pay.xlsx.manifest.json: intake.manifest is required");
    expect(fileWait('pay.csv', seen({ staleMarker: true }), policy).line).toMatch(/its completion marker is older than the file and ignored; write pay\.csv\.done to take it at once/);
    expect(fileWait('pay.csv', seen(), { ...policy, marker: 'off' }).line).toMatch(/\(no completion marker; completion markers are off \(intake\.marker\)\)$/);
  });

  it('whether a file may still be taken before --wait ends', () => {
    const whole = seen();
    expect(mayBeTakenBy(fileWait('a.csv', whole, policy), whole, policy, T0, T0 + 14_000)).toBe(false);
    expect(mayBeTakenBy(fileWait('a.csv', whole, policy), whole, policy, T0, T0 + 15_000)).toBe(true);
    // Cut short: it may end whole at once and be taken a stability interval later.
    const cut = seen({ endsWithLineEnd: false });
    expect(mayBeTakenBy(fileWait('a.csv', cut, policy), cut, policy, T0, T0 + 20_000)).toBe(true);
    expect(mayBeTakenBy(fileWait('a.csv', cut, policy), cut, policy, T0, T0 + 10_000)).toBe(false);
  });

  it('run looks again within a second at a file cut mid-line, not at the end of its longer wait', () => {
    const cutSeen = seen({ endsWithLineEnd: false });
    const cut = readiness(cutSeen, T0 + 4_000, policy);
    expect(cut.ready === false && lookAgainInMs(cutSeen, cut.retryInMs, policy)).toBe(1_000);
    // A whole file is looked at again when its interval is over, as before.
    const whole = readiness(seen(), T0 + 4_000, policy);
    expect(whole.ready === false && lookAgainInMs(seen(), whole.retryInMs, policy)).toBe(11_000);
    // A stability interval shorter than a second: no later than it.
    expect(lookAgainInMs(cutSeen, 5_000, { ...policy, stableMs: 300 })).toBe(300);
  });
});
