/** The reconciliation's verdict: "0 differences" only when every check ran; what report's exit code, the console and the notifications read. */
import { describe, expect, it } from 'vitest';
import type { CheckRun } from '../../src/reports/reconciliation-verdict.js';
import { verdictExitCode, verdictFields, verdictFromFields, verdictOf, verdictTone } from '../../src/reports/reconciliation-verdict.js';

const ran = (check: CheckRun['check']): CheckRun => ({ check, ran: true, detail: '' });
const notRun = (check: CheckRun['check']): CheckRun => ({ check, ran: false, detail: 'not offered by the service' });
const ALL: CheckRun[] = [ran('service_states'), ran('service_ledger'), ran('held_answers'), ran('corrections_paid_once')];
const NO_LEDGER: CheckRun[] = [ran('service_states'), notRun('service_ledger'), ran('held_answers'), ran('corrections_paid_once')];

describe('the reconciliation verdict', () => {
  it('says 0 differences only when every check ran and found none', () => {
    expect(verdictOf(ALL, 0, 0)).toEqual({ status: 'clean', complete: true, notRun: [], differences: 0, unexplained: 0, words: '0 differences' });
    expect(verdictOf(NO_LEDGER, 0, 0)).toEqual({ status: 'incomplete', complete: false, notRun: ['service_ledger'], differences: 0, unexplained: 0, words: 'incomplete: ledger not compared' });
    expect(verdictOf([notRun('service_states'), notRun('service_ledger')], 2, 1).words).toBe('incomplete: service states not read, ledger not compared; 2 differences: 1 unexplained, 1 explained (paybatch behind the service)');
    expect(verdictOf(ALL, 6, 6)).toMatchObject({ status: 'differences', words: '6 differences: 6 unexplained, 0 explained (paybatch behind the service)' });
    expect(verdictOf(ALL, 2, 0)).toMatchObject({ status: 'clean', words: '2 differences: 0 unexplained, 2 explained (paybatch behind the service)' });
  });

  it('exits 0 only for a complete report with nothing unexplained, 3 otherwise; green only for a complete report with none', () => {
    expect(verdictExitCode(verdictOf(ALL, 0, 0))).toBe(0);
    expect(verdictExitCode(verdictOf(ALL, 2, 0))).toBe(0);
    expect(verdictExitCode(verdictOf(ALL, 6, 6))).toBe(3);
    expect(verdictExitCode(verdictOf(NO_LEDGER, 0, 0))).toBe(3);
    expect(verdictTone(verdictOf(ALL, 0, 0))).toBe('ok');
    expect(verdictTone(verdictOf(NO_LEDGER, 0, 0))).toBe('warn');
    expect(verdictTone(verdictOf(ALL, 6, 6))).toBe('bad');
  });

  it('reads back the verdict recorded with a report; a record that does not say its checks all ran is never clean', () => {
    for (const verdict of [verdictOf(ALL, 0, 0), verdictOf(NO_LEDGER, 0, 0), verdictOf(ALL, 6, 2), verdictOf(NO_LEDGER, 3, 3)]) {
      expect(verdictFromFields(JSON.parse(JSON.stringify(verdictFields(verdict))) as Record<string, unknown>)).toEqual(verdict);
    }
    // As reports were recorded before their checks were: only counts.
    const old = verdictFromFields({ differences: 0, unexplained: 0 });
    expect(old).toMatchObject({ status: 'incomplete', complete: false, words: 'incomplete: the checks made were not recorded' });
    expect(verdictExitCode(old)).toBe(3);
    expect(verdictFromFields({ complete: false, not_run: ['no_such_check'], differences: 0 }).status).toBe('incomplete');
    expect(verdictFromFields({ complete: true, differences: 4 })).toMatchObject({ status: 'differences', unexplained: 4 });
  });
});
