/**
 * Which facts of the engine's log are told to people, and in what words. Pure:
 * a log event and its fields in, a notification (or nothing) out. Each
 * notification carries a dedupe key naming the fact, so that the same fact is
 * queued once per channel however many times, or by however many workers, it
 * was seen. Text the service or a file supplied passes through the account-number
 * redaction first: a notification never carries an account number.
 */
import { redactAccountNumbers } from '../api/redact.js';
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { money } from '../engine/for-people.js';
import { verdictExitCode, verdictFromFields } from '../reports/reconciliation-verdict.js';
import type { NotificationEvent } from './config.js';

export interface Notification {
  event: NotificationEvent;
  /** The fact, once: `batch_settled:<batch>`, `row_attention:<batch>:<line>:<state>`, ... */
  dedupe_key: string;
  /** One line, for a mail subject or a chat message's first line. */
  subject: string;
  /** A few lines: what happened, and what a person can do. */
  text: string;
  /** The same, structured, for programs (the signed webhook's `data`). */
  data: Record<string, unknown>;
}

/** A settled batch's counts, read from the store when it settled (batch-summary.ts). */
export interface BatchSummary {
  file: string | null;
  rows: number;
  by_state: Record<string, number>;
  /** Rows that need a person for money safety (answer mismatch, funding refused, balance run out). */
  need_person: number;
  /** Output currency to minor units paid out. */
  paid_out: Record<string, string>;
  /** Input currency to minor units funded. */
  funded: Record<string, string>;
}

/** The log events that are news for people, and the notification each is. */
const TOLD: Readonly<Record<string, NotificationEvent>> = {
  approval_requested: 'approval_requested',
  batch_settled: 'batch_settled',
  row_attention: 'row_attention',
  // A cancellation sent three times that the service still holds cancellable (decide's cancelAgain): a person asks the service.
  cancel_given_up: 'row_attention',
  balance_exhausted: 'balance_exhausted',
  intake_rejected: 'file_rejected',
  intake_unreadable: 'file_rejected',
  intake_not_read: 'file_rejected',
  intake_duplicate: 'file_rejected',
  reconciliation_written: 'reconciliation_differences',
  archived_file_changed: 'file_changed',
};

/** The notification a log event may become (before its fields are looked at), or null. */
export function notificationEventOf(logEvent: string): NotificationEvent | null {
  return Object.hasOwn(TOLD, logEvent) ? (TOLD[logEvent] as NotificationEvent) : null;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
const BATCH_ID = /(B\d{8}-[0-9a-f]{8}(?:-\d+)?)/;

/** Free text with account-like runs shortened; batch ids (eight digits of a date) are left whole. */
export function withoutAccountNumbers(value: string): string {
  return value.split(BATCH_ID).map((part, i) => (i % 2 === 1 ? part : redactAccountNumbers(part))).join('');
}

/** A short, stable fingerprint of text that names a fact, for a key. */
const fingerprint = (value: string): string => createHash('sha256').update(value).digest('hex').slice(0, 16);

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * The notification for a log event, or null when the event is not news (or its
 * fields do not name the fact). `summary` is the settled batch's counts, for
 * `batch_settled`; null when they could not be read.
 */
export function notificationFor(logEvent: string, fields: Record<string, unknown>, summary: BatchSummary | null = null): Notification | null {
  switch (notificationEventOf(logEvent)) {
    case 'approval_requested': return approvalRequested(fields);
    case 'batch_settled': return batchSettled(fields, summary);
    case 'row_attention': return rowAttention(fields, logEvent === 'cancel_given_up' ? (text(fields.accepted_at) ? 'cancel_not_carried_out' : 'cancel_given_up') : null);
    case 'balance_exhausted': return balanceExhausted(fields);
    case 'file_rejected': return fileRejected(logEvent, fields);
    case 'reconciliation_differences': return reconciliationDifferences(fields);
    case 'file_changed': return fileChanged(fields);
    default: return null;
  }
}

function approvalRequested(fields: Record<string, unknown>): Notification | null {
  const batch = text(fields.batch);
  if (!batch) return null;
  const given = text(fields.file);
  const file = given ? withoutAccountNumbers(basename(given)) : null;
  const stage = text(fields.stage);
  return {
    event: 'approval_requested',
    dedupe_key: `approval_requested:${batch}`,
    subject: `Batch ${batch}${file ? ` (${file})` : ''} waits for approval`,
    // The stage's words (batch-stage.ts): by whom, and that nothing is sent before it.
    text: `${stage ? `Batch ${batch}: ${stage}.` : `Nothing of batch ${batch} is sent before it is approved.`}\nLook at it: paybatch preview ${batch}\nApprove it: paybatch approve ${batch} --key FILE --as NAME`,
    data: { batch, file, ...(stage ? { stage } : {}) },
  };
}

function batchSettled(fields: Record<string, unknown>, summary: BatchSummary | null): Notification | null {
  const batch = text(fields.batch);
  if (!batch) return null;
  const base = { event: 'batch_settled' as const, dedupe_key: `batch_settled:${batch}` };
  if (!summary) {
    return { ...base, subject: `Batch ${batch} settled`, text: `Every row of batch ${batch} is final. Its counts could not be read here: paybatch status ${batch}`, data: { batch } };
  }
  const file = summary.file ? withoutAccountNumbers(summary.file) : null;
  const states = Object.entries(summary.by_state).map(([state, n]) => `${state} ${n}`).join(', ');
  const paid = Object.entries(summary.paid_out).map(([currency, minor]) => money(minor, currency)).join(', ');
  const lines = [
    `${plural(summary.rows, 'row')}: ${states || 'none'}.`,
    `Paid out: ${paid || 'nothing'}.`,
    ...(summary.need_person > 0 ? [`${plural(summary.need_person, 'row needs', 'rows need')} a person: paybatch status ${batch}`] : []),
  ];
  return {
    ...base,
    subject: `Batch ${batch}${file ? ` (${file})` : ''} settled: ${plural(summary.rows, 'row')}, ${summary.by_state.paid ?? 0} paid`,
    text: lines.join('\n'),
    data: { batch, ...summary, file },
  };
}

/** `cancel`: a cancellation given up (sent three times, or accepted and not carried out), a fact of its own; else null. */
function rowAttention(fields: Record<string, unknown>, cancel: 'cancel_given_up' | 'cancel_not_carried_out' | null): Notification | null {
  const batch = text(fields.batch);
  const line = count(fields.line);
  const state = text(fields.state);
  if (!batch || line === null || !state) return null;
  const externalId = text(fields.external_id);
  const reason = text(fields.reason);
  return {
    event: 'row_attention',
    // A given-up cancellation is its own fact: the row may have needed a person in this state before, for another reason.
    dedupe_key: `row_attention:${batch}:${line}:${cancel ?? state}`,
    subject: `Row ${line} of batch ${batch} needs a person: ${cancel ? `its cancellation was not ${cancel === 'cancel_given_up' ? 'taken' : 'carried out'} (${state})` : state}`,
    text: `Line ${line}${externalId ? ` (external_id ${externalId})` : ''} of batch ${batch} is ${state}${reason ? `: ${withoutAccountNumbers(reason)}` : ''}.\nSee paybatch status ${batch}`,
    data: { batch, line, external_id: externalId, state, reason: reason ? withoutAccountNumbers(reason) : null },
  };
}

function balanceExhausted(fields: Record<string, unknown>): Notification | null {
  const currency = text(fields.currency);
  if (!currency) return null;
  const detail = text(fields.detail);
  const notSent = count(fields.not_sent);
  return {
    event: 'balance_exhausted',
    // The engine says it once per stop; the detail names the funding that was refused, so a later stop is a new fact.
    dedupe_key: `balance_exhausted:${currency}:${fingerprint(detail ?? '')}`,
    subject: `The ${currency} balance ran out${notSent === null ? '' : `: ${plural(notSent, 'row')} not sent`}`,
    text: `${detail ? `${withoutAccountNumbers(detail)}.\n` : ''}Nothing more in ${currency} is created or funded for the batches open now; their rows not sent yet end as not sent, and those created are cancelled.`,
    data: { currency, detail: detail ? withoutAccountNumbers(detail) : null, not_sent: notSent },
  };
}

/** How each intake outcome that sets a file aside is said. */
const SET_ASIDE: Readonly<Record<string, string>> = {
  intake_rejected: 'rejected', intake_unreadable: 'unreadable', intake_not_read: 'not read', intake_duplicate: 'a duplicate',
};
/** The time a file was taken, which intake puts before its name in processing/ and failed/ (engine/intake.ts claimName). */
const CLAIM_PREFIX = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z--/;

function fileRejected(logEvent: string, fields: Record<string, unknown>): Notification | null {
  const path = text(fields.file);
  if (!path) return null;
  const kept = withoutAccountNumbers(basename(path));
  const file = kept.replace(CLAIM_PREFIX, '');
  const batch = text(fields.batch);
  const reason = text(fields.reason);
  const report = text(fields.report) ?? text(fields.note);
  const how = SET_ASIDE[logEvent] ?? 'rejected';
  const why = logEvent === 'intake_duplicate' ? 'the same content was taken in before' : reason ? withoutAccountNumbers(reason) : null;
  return {
    event: 'file_rejected',
    // The name in failed/ carries the time the file was taken: the same file dropped again is a new fact.
    dedupe_key: `file_rejected:${batch ?? kept}`,
    subject: `File ${file} ${how}: nothing of it was sent`,
    text: [`${file}${batch ? ` (batch ${batch})` : ''} was ${how}${why ? `: ${why}` : ''}; it was moved to failed/.`, ...(report ? [`See ${basename(report)} in failed/`] : [])].join('\n'),
    data: { file, batch, how, reason: why, report: report ? basename(report) : null },
  };
}

/** A batch file found changed when archived: what was paid is what was validated, but a person must look at the rest. */
function fileChanged(fields: Record<string, unknown>): Notification | null {
  const batch = text(fields.batch);
  const name = text(fields.file);
  if (!batch || !name) return null;
  const file = withoutAccountNumbers(basename(name));
  const held = text(fields.held);
  return {
    event: 'file_changed',
    dedupe_key: `file_changed:${batch}`,
    subject: `File ${file} changed after it was taken in (batch ${batch}): a person must look`,
    text: [
      `${file} (batch ${batch}) is not the file that was validated: its SHA-256 differs at the archive. What was paid is what was validated.`,
      held ? `Rows added to it were not paid: they are in ${basename(held)} beside the archived file, to check and drop in the inbox.` : 'See the .changed.txt note beside the archived file.',
    ].join('\n'),
    data: { batch, file, sha256_validated: text(fields.sha256_validated), sha256_now: text(fields.sha256_now), held: held ? basename(held) : null, lines_held: count(fields.lines_held) },
  };
}

/**
 * The nightly reconciliation, told by the same verdict as `paybatch report`'s
 * exit code: when it is incomplete (a check could not run) or has differences
 * nobody can explain; never for a complete report with none.
 */
function reconciliationDifferences(fields: Record<string, unknown>): Notification | null {
  const date = text(fields.date);
  if (!date) return null;
  const verdict = verdictFromFields(fields);
  if (verdictExitCode(verdict) === 0) return null;
  const found = verdict.complete
    ? `found ${plural(verdict.differences, 'difference')} between paybatch's records and the service's (${verdict.unexplained} unexplained)`
    : `is incomplete: ${verdict.words.slice('incomplete: '.length)}. It cannot be signed off as it is`;
  return {
    event: 'reconciliation_differences',
    dedupe_key: `reconciliation_differences:${date}`,
    subject: `Reconciliation for ${date}: ${verdict.complete ? plural(verdict.differences, 'difference') : verdict.words}`,
    text: `The reconciliation for ${date} ${found}.\nSee its report: paybatch report --date ${date}`,
    data: { date, verdict: verdict.words, complete: verdict.complete, not_run: verdict.notRun, differences: verdict.differences, unexplained: verdict.unexplained, files: count(fields.files) },
  };
}
