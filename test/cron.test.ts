import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { cronProblem, nextRunAfter, timeZoneProblem } from '../src/cron.js';

const nightly = { cron: '0 2 * * *', time_zone: 'Europe/London' };

describe('cron expressions (croner) in a time zone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-cron-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the cron expression in its time zone, summer time included', () => {
    expect(new Date(nextRunAfter(nightly, Date.parse('2026-07-01T00:00:00Z')) as number).toISOString()).toBe('2026-07-01T01:00:00.000Z');
    expect(new Date(nextRunAfter(nightly, Date.parse('2026-12-01T00:00:00Z')) as number).toISOString()).toBe('2026-12-01T02:00:00.000Z');
  });

  it('names a bad expression or time zone, also when loading the configuration', () => {
    expect(cronProblem('61 * * * *', 'UTC')).toMatch(/not a cron expression/);
    expect(cronProblem('0 2 * * *', 'Mars/Olympus')).toMatch(/not an IANA time zone/);
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ watch: { schedules: { intake: { cron: '0 25 * * *' } } } }));
    expect(() => loadConfig({ file })).toThrow(/watch\.schedules\.intake.*not a cron expression/s);
  });

  it('knows a time zone of the reports: UTC without asking, any other as the schedules do', () => {
    expect(timeZoneProblem('UTC')).toBeNull();
    expect(timeZoneProblem('Europe/London')).toBeNull();
    expect(timeZoneProblem('Mars/Olympus')).toMatch(/not an IANA time zone/);
    const file = join(dir, 'zone.json');
    writeFileSync(file, JSON.stringify({ reports: { time_zone: 'Mars/Olympus' } }));
    expect(() => loadConfig({ file })).toThrow(/reports\.time_zone.*not an IANA time zone/s);
    writeFileSync(file, JSON.stringify({ reports: { time_zone: 'America/New_York' } }));
    expect(loadConfig({ file }).reports.time_zone).toBe('America/New_York');
  });
});
