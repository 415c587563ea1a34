/**
 * What a reconciliation may be signed off as: it names every check it made and
 * whether each ran. "0 differences" is said only when every check ran and found
 * none; a check that could not run (the service offers no ledger, the service
 * could not be reached, it refused the reads) makes the report *incomplete*,
 * whatever the other checks found. `paybatch report`, the console, the nightly
 * schedule and the notifications all read this one verdict. Pure.
 */

/** The checks of a reconciliation, in the order they are listed. */
export const CHECK_NAMES = ['service_states', 'service_ledger', 'held_answers', 'corrections_paid_once'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface CheckRun {
  check: CheckName;
  ran: boolean;
  /** What it compared, or why it could not run. */
  detail: string;
}

/** What each check is called when it did not run, in the verdict's words. */
const NOT_RUN_WORDS: Record<CheckName, string> = {
  service_states: 'service states not read',
  service_ledger: 'ledger not compared',
  held_answers: 'held rows not listed',
  corrections_paid_once: 'corrections not checked',
};

export type VerdictStatus = 'clean' | 'differences' | 'incomplete';

export interface Verdict {
  /** clean: every check ran, nothing unexplained; differences: every check ran, some unexplained; incomplete: a check did not run. */
  status: VerdictStatus;
  complete: boolean;
  notRun: CheckName[];
  differences: number;
  unexplained: number;
  /** "0 differences", "3 differences: 1 unexplained, ...", or "incomplete: ledger not compared". */
  words: string;
}

/** "0 differences" for none; otherwise how many, and how many of them nobody can explain. */
export function differencesWords(n: number, unexplained: number): string {
  if (n === 0) return '0 differences';
  return `${n} difference${n === 1 ? '' : 's'}: ${unexplained} unexplained, ${n - unexplained} explained (paybatch behind the service)`;
}

export function verdictOf(runs: readonly CheckRun[], differences: number, unexplained: number): Verdict {
  const notRun = runs.filter((r) => !r.ran).map((r) => r.check);
  const complete = notRun.length === 0;
  const found = differencesWords(differences, unexplained);
  const words = complete ? found : `incomplete: ${notRun.map((c) => NOT_RUN_WORDS[c]).join(', ')}${differences > 0 ? `; ${found}` : ''}`;
  const status: VerdictStatus = !complete ? 'incomplete' : unexplained > 0 ? 'differences' : 'clean';
  return { status, complete, notRun, differences, unexplained, words };
}

/** The verdict as fields of a log line or an audit entry; read back by `verdictFromFields`. */
export function verdictFields(verdict: Verdict): { verdict: string; complete: boolean; not_run: CheckName[]; differences: number; unexplained: number } {
  return { verdict: verdict.words, complete: verdict.complete, not_run: verdict.notRun, differences: verdict.differences, unexplained: verdict.unexplained };
}

const isCheckName = (v: unknown): v is CheckName => typeof v === 'string' && (CHECK_NAMES as readonly string[]).includes(v);
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);

/**
 * The verdict recorded with a report (an audit entry's details, a log line's
 * fields). A record that does not say its checks all ran (one written before
 * paybatch recorded them) is incomplete: it cannot be signed off as clean.
 */
export function verdictFromFields(fields: Record<string, unknown>): Verdict {
  const differences = count(fields.differences) ?? 0;
  // Not told how many are unexplained: none is taken as explained.
  const unexplained = Math.min(count(fields.unexplained) ?? differences, differences);
  if (fields.complete === true) return verdictOf([], differences, unexplained);
  const notRun = Array.isArray(fields.not_run) ? fields.not_run.filter(isCheckName) : [];
  if (fields.complete === false && notRun.length > 0) return verdictOf(notRun.map((check) => ({ check, ran: false, detail: '' })), differences, unexplained);
  const found = differencesWords(differences, unexplained);
  return { status: 'incomplete', complete: false, notRun: [], differences, unexplained, words: `incomplete: the checks made were not recorded${differences > 0 ? `; ${found}` : ''}` };
}

/** Exit 0 only for a complete report with nothing unexplained; otherwise 3, a person must look (as `run` uses it). */
export const verdictExitCode = (verdict: Verdict): 0 | 3 => (verdict.status === 'clean' ? 0 : 3);

/** How a person's eye should take it: green only for a complete report with no difference at all. */
export function verdictTone(verdict: Verdict): 'ok' | 'warn' | 'bad' {
  if (verdict.status === 'incomplete') return 'warn';
  return verdict.differences === 0 ? 'ok' : 'bad';
}
