/**
 * Possible duplicate payments, caught before money moves (issue 37). A row is a
 * possible duplicate when an earlier row (of an earlier batch that has not
 * ended unpaid, or an earlier line of its own file) pays the same recipient
 * account (validate/recipient-key.ts) the same amount in the same currency
 * within batch.duplicate_window: its *twin*. The store only finds candidate
 * twins of other batches, duplicate-screen.ts those of the same file; what to
 * do with the row is decided here, purely, from the twins, the batch's policy
 * (batch.on_duplicate) and a person's allowance (paybatch allow). Of a payment
 * said twice in one file, the earlier line is sent as usual and the later one
 * is the possible duplicate (the validation's repeated_payout warning names it
 * too).
 *
 * One rule stands above the policy and above a person: a row whose twin may
 * still pay (in flight, held, not sent yet) is held, so that the same money is
 * never sent twice while the first payment can still arrive.
 */
import { NEVER_SENT_PHASES } from '../payout-states.js';
import type { Allowance, Twin } from '../store/port.js';

export type { Allowance, Twin } from '../store/port.js';

/** A twin as the check sees it: `same_file` when it is an earlier line of the row's own file (not sent yet: it is sent first). */
export type Candidate = Twin & { same_file?: boolean };

/**
 * Whether the twin was paid, may still pay, or ended unpaid (and so is no twin); `same_file`: an earlier line of the
 * row's own file, which the batch.on_duplicate policy decides about (it is the one sent, this row the one held or warned).
 */
export type TwinStanding = 'paid' | 'in_flight' | 'unpaid' | 'same_file';

export type DuplicatePolicy = 'hold' | 'warn' | 'allow';


export type DuplicateDecision =
  | { action: 'send'; why: 'no_twin' | 'allowed_by_person' | 'allowed_by_policy' }
  | { action: 'warn'; twin: Candidate }
  | { action: 'hold'; twin: Candidate; why: 'twin_in_flight' | 'policy_hold' };

const NEVER_SENT: ReadonlySet<string> = new Set(NEVER_SENT_PHASES);

export function twinStanding(twin: Pick<Candidate, 'phase' | 'state' | 'same_file'>): TwinStanding {
  if (twin.same_file === true) return 'same_file';
  if (NEVER_SENT.has(twin.phase)) return 'unpaid';
  if (twin.phase === 'final') return twin.state === 'paid' ? 'paid' : 'unpaid';
  // Any other phase (in flight, held for a person, waiting to be sent) may still pay.
  return 'in_flight';
}

/**
 * What to do with a row given its twins: send it, send it and say so, or hold
 * it for a person. The twin named is the one that decided: one in flight
 * first, else the latest.
 */
export function decideDuplicate(twins: readonly Candidate[], policy: DuplicatePolicy, allowance: Allowance | null): DuplicateDecision {
  const live = twins.filter((t) => twinStanding(t) !== 'unpaid');
  if (live.length === 0) return { action: 'send', why: 'no_twin' };
  const inFlight = live.find((t) => twinStanding(t) === 'in_flight');
  if (inFlight) return { action: 'hold', twin: inFlight, why: 'twin_in_flight' };
  if (allowance) return { action: 'send', why: 'allowed_by_person' };
  const latest = [...live].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))[0] as Candidate;
  if (policy === 'allow') return { action: 'send', why: 'allowed_by_policy' };
  if (policy === 'warn') return { action: 'warn', twin: latest };
  return { action: 'hold', twin: latest, why: 'policy_hold' };
}

/** The twin for people: batch, line, external_id, state and date. */
export function describeTwin(twin: Candidate): string {
  if (twin.same_file === true) return `line ${twin.line} of the same file (external_id ${twin.external_id ?? '-'}, sent first)`;
  const standing = twin.state ?? twin.phase;
  return `batch ${twin.batch_id} line ${twin.line} (external_id ${twin.external_id ?? '-'}, ${standing}, ${twin.at.slice(0, 10)})`;
}

/** Why a row is held or listed, in words, with its twin. */
export function describeDecision(decision: Exclude<DuplicateDecision, { action: 'send' }>): string {
  const twin = describeTwin(decision.twin);
  if (decision.action === 'warn') return `possible duplicate of ${twin}: sent (batch.on_duplicate is warn)`;
  if (decision.why === 'twin_in_flight') {
    return `possible duplicate of ${twin}, which may still pay: held, whatever batch.on_duplicate says, until it ends (wait for it or ask the service; never pay this again by hand)`;
  }
  return `possible duplicate of ${twin}: held until a person allows it (paybatch allow) or cancels it`;
}

/** The earliest time (ISO 8601) a twin may date from, `at` being when the row was received; null: the check is off. */
export function windowStart(at: number, window: string): string | null {
  if (window === 'off') return null;
  const match = /^(\d+)([dh])$/.exec(window);
  if (!match) throw new Error(`batch.duplicate_window: ${window} is not a window`);
  const hours = Number(match[1]) * (match[2] === 'd' ? 24 : 1);
  return new Date(at - hours * 3_600_000).toISOString();
}
