/**
 * Corrections: rows that ended unpaid, paid again in a child batch. Pure.
 *
 * A correction's external_id is derived from its original's, deterministically
 * (`X` → `X~R1`, `X~R1` → `X~R2`), so that two corrections of one original ask
 * the service for the same external_id: the service refuses the second (8), and
 * paybatch refuses it first (an external_id already used). A correction is taken
 * only from an original that can no longer pay: never sent, or final without
 * being paid (canceled, refunded, refused by the service).
 */
import { createHash } from 'node:crypto';
import { REASONS, isNeverSentEnd, isUnpaidFinalState } from '../payout-states.js';
import type { Phase } from '../payout-states.js';
import { CORRECTION_FORM } from '../validate/correction-id.js';

/** The service's limit on external_id [2.1]. */
const MAX_EXTERNAL_ID = 255;

/** The external_id of a correction of the row whose external_id is `original`: within 255 characters. */
export function correctionExternalId(original: string): string {
  const match = CORRECTION_FORM.exec(original);
  const base = match ? (match[1] as string) : original;
  const suffix = `~R${match ? Number(match[2]) + 1 : 1}`;
  if (base.length + suffix.length <= MAX_EXTERNAL_ID) return `${base}${suffix}`;
  // Too long: a prefix and a digest of the whole base, still the same for the same original.
  const digest = createHash('sha256').update(base).digest('hex').slice(0, 12);
  return `${base.slice(0, MAX_EXTERNAL_ID - suffix.length - digest.length - 1)}-${digest}${suffix}`;
}

/** What is known of a row to decide whether it may be paid again. */
export interface OriginalRow {
  phase: Phase;
  state: string | null;
  outcome: string | null;
}

export type Correctable = { ok: true } | { ok: false; code: string; why: string };


/**
 * Whether a row may be corrected now: it could not pay any more, and was not paid.
 * Anything that could still pay (created, funded, processing, stuck, error,
 * manual, held for a person, being cancelled) is refused until it ends.
 */
export function correctable(row: OriginalRow): Correctable {
  if (row.phase === 'refused') {
    return row.outcome === REASONS.externalIdAlreadyUsed
      ? { ok: false, code: 'original_was_a_duplicate', why: 'the original was refused because an earlier batch used its external_id: that one is the row to look at' }
      : { ok: true };
  }
  if (isNeverSentEnd(row.phase)) return { ok: true };
  if (row.phase === 'final') {
    if (row.state === 'paid') return { ok: false, code: 'original_paid', why: 'the original was paid' };
    if (row.state === null || isUnpaidFinalState(row.state)) return { ok: true };
    return { ok: false, code: 'original_may_still_pay', why: `the original ended ${row.state}` };
  }
  if (row.phase === 'held') return { ok: false, code: 'original_may_still_pay', why: 'the original is held for a person (its answer did not match): cancel it first (paybatch cancel), then correct it' };
  return { ok: false, code: 'original_may_still_pay', why: `the original could still pay (it is ${row.state ?? row.phase}): wait until it ends, or cancel it first` };
}

/** Why a row is in a corrections file, and what to fix; null when it is not (paid, or could still pay). */
export interface Unpaid {
  state: string;
  reason: string;
  toFix: string;
}

/** Reasons that need no change of the row's details: `paybatch retry` pays such rows again as they were. */
export const RETRY_AS_IS: ReadonlySet<string> = new Set([
  REASONS.insufficientFunds, REASONS.overBudget, REASONS.fundingDeadline, REASONS.corridorInactive, REASONS.senderNotApproved,
  REASONS.approvalExpired, 'funding_window_expired', 'provider_unavailable', 'provider_timeout',
]);

/** The columns that say where a bank payout goes; a corridor requires some of them, a cash payout none. */
const ACCOUNT_COLUMNS = ['recipient_bank_account', 'recipient_iban', 'recipient_sort_code', 'recipient_bic', 'recipient_bank_code'] as const;

/**
 * The account columns of the row's corridor (`corridor`: its required columns, null when unknown): a UK bank
 * payout's sort code and account, an IBAN payout's IBAN, a cash payout's recipient phone (it has no account).
 */
function accountColumns(corridor: readonly string[] | null): string {
  if (!corridor) return 'recipient_bank_account recipient_iban recipient_sort_code';
  const kept = ACCOUNT_COLUMNS.filter((c) => corridor.includes(c));
  if (kept.length > 0) return kept.join(' ');
  return corridor.filter((c) => c.startsWith('recipient_')).join(' ') || 'recipient_*';
}

/** What a person fixes, by reason code: the details the service or paybatch found wrong, in the row's corridor's columns. */
function toFix(code: string, reason: string, errorColumns: readonly string[], corridor: readonly string[] | null): string {
  if (errorColumns.length > 0) return [...new Set(errorColumns)].join(' ');
  if (RETRY_AS_IS.has(code)) return 'nothing: pay it again as it is (paybatch retry)';
  // A row cancelled on request keeps what it was in its reason ("it was error: recipient_phone_number_invalid").
  const was = /\(it was \w+: ([a-z_]+)\)/.exec(reason);
  if (was) code = was[1] as string;
  if (/recipient_phone/.test(code)) return 'recipient_phone_number';
  if (/recipient_(bank_)?account|iban|sort_code/.test(code)) return accountColumns(corridor);
  if (/recipient/.test(code)) return 'recipient_*';
  if (/sender/.test(code)) return 'sender_* (the sender was not approved)';
  if (code === REASONS.quoteRejected) return 'output_amount (over the per-row limit) or engine.max_input_per_row';
  return 'see unpaid_reason';
}

/** `corridorColumns`: the columns the row's corridor requires (config/corridors.json), null when its corridor is not known. */
export function unpaid(row: OriginalRow & { reason: string; code: string; errorColumns: readonly string[]; corridorColumns?: readonly string[] | null }): Unpaid | null {
  const verdict = correctable(row);
  // Held rows are listed too, so that they are not forgotten: their correction is taken once they are cancelled.
  if (!verdict.ok && row.phase !== 'held') return null;
  const state = row.phase === 'invalid' ? 'invalid' : row.phase === 'held' ? (row.outcome ?? 'held') : (row.state ?? row.outcome ?? row.phase);
  const fix = row.phase === 'held' ? 'cancel the original first (paybatch cancel), then this row is taken' : toFix(row.code, row.reason, row.errorColumns, row.corridorColumns ?? null);
  return { state, reason: [row.code, row.reason].filter(Boolean).join(': '), toFix: fix };
}
