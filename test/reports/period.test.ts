import { describe, expect, it } from 'vitest';
import { dateIn, dayBefore, dayPeriod } from '../../src/reports/period.js';

describe('report periods', () => {
  it('is the calendar day in the time zone, 23 or 25 hours long when the clocks change', () => {
    expect(dayPeriod('2026-03-02', 'UTC')).toEqual({ label: '2026-03-02', from: '2026-03-02T00:00:00.000Z', to: '2026-03-03T00:00:00.000Z' });
    expect(dayPeriod('2026-03-29', 'Europe/London')).toMatchObject({ from: '2026-03-29T00:00:00.000Z', to: '2026-03-29T23:00:00.000Z' });
    expect(dayPeriod('2026-10-25', 'Europe/London')).toMatchObject({ from: '2026-10-24T23:00:00.000Z', to: '2026-10-26T00:00:00.000Z' });
    expect(dayPeriod('2026-07-01', 'America/New_York')).toMatchObject({ from: '2026-07-01T04:00:00.000Z', to: '2026-07-02T04:00:00.000Z' });
  });

  it('refuses what is not a calendar date', () => {
    expect(dayPeriod('2026-02-30', 'UTC')).toBeNull();
    expect(dayPeriod('yesterday', 'UTC')).toBeNull();
  });

  it('finds the date of an instant in a zone, and the day before', () => {
    expect(dateIn(Date.parse('2026-07-01T23:30:00Z'), 'Europe/London')).toBe('2026-07-02');
    expect(dayBefore('2026-03-01')).toBe('2026-02-28');
  });
});
