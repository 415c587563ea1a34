/**
 * Four-eyes approval, verified (pure but for the keys handed in): which people
 * may approve, how many distinct approvers a batch needs by its totals and its
 * largest row, and whether the approvals kept for a batch are signatures, by
 * those people's configured keys, over exactly the statement the batch is now.
 * An approval inserted or edited in the database by someone without the
 * approver's private key fails here, and the batch is held.
 */
import type { KeyObject } from 'node:crypto';
import type { Statement } from './statement.js';
import { statementBytes, statementDifferences } from './statement.js';
import { signatureValid } from './keys.js';
import { formatMoney } from '../validate/money.js';

export type Role = 'submitter' | 'approver' | 'admin';

export interface Person {
  name: string;
  role: Role;
  publicKey: KeyObject;
}

/** A rule: this many distinct approvers, for every batch or when a currency's total or largest row reaches a figure. */
export interface Rule {
  approvers: number;
  currency?: string;
  /** Minor units of `currency`, output amounts. */
  totalAtLeast?: bigint;
  rowAtLeast?: bigint;
}

export interface ApprovalPolicy {
  people: ReadonlyMap<string, Person>;
  /** Who submits the files dropped in the inbox: never an approver. */
  inboxSubmitter: string;
  rules: readonly Rule[];
  expiresAfterMs: number;
}

/** What a batch is, for its rules: totals and largest row per output currency (minor units). */
export interface BatchFigures {
  totals: ReadonlyMap<string, bigint>;
  largestRow: ReadonlyMap<string, bigint>;
}

export interface KeptApproval {
  approver: string;
  statement: Statement;
  signature: string;
}

export type Verdict =
  | { ok: true; approvers: string[]; ceiling: Record<string, string>; expiresAt: string }
  | { ok: false; waiting: true; reason: string; approvers: string[]; required: number }
  | { ok: false; waiting: false; reason: string };

/** Two ceilings name the same amounts, whatever the order of their keys (the signature is over sorted bytes). */
export const sameCeiling = (a: Record<string, string>, b: Record<string, string>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([currency, minor]) => b[currency] === minor);

export const canApprove = (person: Person | undefined, submitter: string): boolean =>
  person !== undefined && (person.role === 'approver' || person.role === 'admin') && person.name !== submitter;

/** How many distinct approvers the batch needs, and which rules said so. */
export function requiredApprovers(policy: ApprovalPolicy, figures: BatchFigures): { count: number; because: string[] } {
  let count = 0;
  const because: string[] = [];
  for (const rule of policy.rules) {
    const total = rule.currency ? figures.totals.get(rule.currency) ?? 0n : 0n;
    const largest = rule.currency ? figures.largestRow.get(rule.currency) ?? 0n : 0n;
    const applies = rule.currency === undefined
      || (rule.totalAtLeast !== undefined && total >= rule.totalAtLeast)
      || (rule.rowAtLeast !== undefined && largest >= rule.rowAtLeast)
      || (rule.totalAtLeast === undefined && rule.rowAtLeast === undefined && total > 0n);
    if (!applies) continue;
    const currency = rule.currency;
    because.push(currency
      ? `${rule.approvers} for ${currency}${rule.totalAtLeast !== undefined ? ` totals from ${formatMoney(rule.totalAtLeast, currency)}` : ''}${rule.rowAtLeast !== undefined ? ` rows from ${formatMoney(rule.rowAtLeast, currency)}` : ''}`
      : `${rule.approvers} for every batch`);
    count = Math.max(count, rule.approvers);
  }
  return { count, because };
}

/**
 * The approvals kept for a batch against what the batch is now (`expected`,
 * recomputed from the store), the policy and the time. Every approval must be
 * valid; together they must reach the number the rules require. `at` is the
 * time the expiry is checked against: now, or the sealed time the batch was
 * released (see release-seal.ts), never a column's say-so.
 */
export function verifyApprovals(policy: ApprovalPolicy, expected: Omit<Statement, 'ceiling' | 'expires_at'>, figures: BatchFigures, kept: readonly KeptApproval[], submitter: string, at: number): Verdict {
  const required = requiredApprovers(policy, figures).count;
  const approvers: string[] = [];
  let first: Statement | null = null;
  for (const approval of kept) {
    const person = policy.people.get(approval.approver);
    if (!canApprove(person, submitter)) return { ok: false, waiting: false, reason: `${approval.approver} may not approve this batch (not an approver in the policy, or its submitter)` };
    const differences = statementDifferences(approval.statement, { ...expected, ceiling: approval.statement.ceiling, expires_at: approval.statement.expires_at });
    if (differences.length > 0) return { ok: false, waiting: false, reason: `the approval by ${approval.approver} is not for this batch as it is now: ${differences.join('; ')}` };
    if (!signatureValid((person as Person).publicKey, statementBytes(approval.statement), approval.signature)) {
      return { ok: false, waiting: false, reason: `the approval by ${approval.approver} is not signed by ${approval.approver}'s key (inserted or edited other than by paybatch approve)` };
    }
    if (first && (!sameCeiling(first.ceiling, approval.statement.ceiling) || first.expires_at !== approval.statement.expires_at)) {
      return { ok: false, waiting: false, reason: `${approval.approver} signed another ceiling or expiry than the first approver: every approver signs the same statement` };
    }
    first ??= approval.statement;
    if (!approvers.includes(approval.approver)) approvers.push(approval.approver);
  }
  // Released in time, an approval stays good for the rest of the batch (a restart does not void it): `at` is then the release's.
  if (first && !(at < Date.parse(first.expires_at))) return { ok: false, waiting: false, reason: `the approval expired at ${first.expires_at}` };
  if (!first || approvers.length < required) {
    return { ok: false, waiting: true, reason: `${approvers.length} of ${required} approvals`, approvers, required };
  }
  return { ok: true, approvers, ceiling: first.ceiling, expiresAt: first.expires_at };
}
