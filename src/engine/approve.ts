/**
 * `paybatch approve` and `paybatch reject`: a person signs, with their own
 * private key (a file that never enters the workspace), a statement of exactly
 * what will be paid; a second approver signs the same statement. The signature
 * is checked against that person's configured public key before it is kept:
 * the wrong key is refused at once rather than holding the batch later.
 */
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { privateKeyFrom, signBytes } from '../approvals/keys.js';
import type { Statement } from '../approvals/statement.js';
import { statementBytes } from '../approvals/statement.js';
import type { ApprovalPolicy } from '../approvals/verify.js';
import { canApprove } from '../approvals/verify.js';
import { proposedCeiling } from '../approvals/facts.js';
import type { Clock } from '../clock.js';
import { ExitCode, PaybatchError } from '../errors.js';
import { money } from './decide.js';
import type { ApprovalGate, GateVerdict } from './approval-gate.js';
import type { ApprovalStore, AuditStore, BatchRecord, IntakeStore } from '../store/store.js';
import { currencyDecimals, parseMajorAmount } from '../validate/money.js';

export interface ApproveRequest {
  batch: string;
  as: string;
  keyFile: string;
  /** Input currency to the ceiling in major units ("USD=2500.00"), overriding the proposal. */
  ceiling: Record<string, string>;
}

export interface ApproveDeps {
  store: IntakeStore & ApprovalStore & AuditStore;
  gate: ApprovalGate;
  policy: ApprovalPolicy;
  clock: Clock;
  marginPercent: number;
}

const refuse = (message: string): never => {
  throw new PaybatchError(message, ExitCode.failure);
};

/** The batch, awaiting approval. */
async function awaiting(store: IntakeStore, id: string): Promise<BatchRecord> {
  const batch = await store.batch(id);
  if (!batch) return refuse(`no batch ${id}`);
  if (batch.status !== 'accepted' || (batch.approval !== 'awaiting' && batch.approval !== null) || batch.released === 1) return refuse(`batch ${id} is not awaiting approval (its approval: ${batch.approval}${batch.approval_reason ? `, ${batch.approval_reason}` : ''})`);
  return batch;
}

function ceilingOf(request: ApproveRequest, proposed: Map<string, bigint | null>): Record<string, string> {
  const ceiling: Record<string, string> = {};
  for (const [currency, minor] of proposed) {
    const given = request.ceiling[currency];
    if (given !== undefined) {
      const parsed = parseMajorAmount(given, currencyDecimals(currency) ?? 2);
      if (!parsed.ok) refuse(`--ceiling ${currency}=${given}: ${parsed.message}`);
      ceiling[currency] = (parsed as { minor: bigint }).minor.toString();
    } else if (minor === null) {
      refuse(`the funding in ${currency} cannot be estimated (rows paid in another currency, and no approvals.estimate_rates for them): give --ceiling ${currency}=AMOUNT`);
    } else {
      ceiling[currency] = (minor as bigint).toString();
    }
  }
  for (const currency of Object.keys(request.ceiling)) if (!proposed.has(currency)) refuse(`--ceiling ${currency}: the batch funds nothing in ${currency}`);
  return ceiling;
}

export async function approveBatch(request: ApproveRequest, deps: ApproveDeps): Promise<{ statement: Statement; verdict: GateVerdict }> {
  const { store, gate, policy } = deps;
  const batch = await awaiting(store, request.batch);
  const person = policy.people.get(request.as);
  if (!person) refuse(`${request.as} is not a person of the approval policy`);
  if (request.as === batch.submitted_by) refuse(`${request.as} submitted batch ${batch.id} and cannot approve it: a second person must`);
  if (!canApprove(person, batch.submitted_by ?? policy.inboxSubmitter)) refuse(`${request.as} may not approve (role ${person?.role})`);
  const kept = await store.approvalsOf(batch.id);
  if (kept.some((k) => k.decision === 'approve' && k.person === request.as)) refuse(`${request.as} has already approved batch ${batch.id}: a second approver must be another person`);
  let pem: string;
  try {
    pem = readFileSync(request.keyFile, 'utf8');
  } catch (error) {
    return refuse(`cannot read the key file ${request.keyFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const key = privateKeyFrom(pem);
  if (typeof key === 'string') return refuse(`${request.keyFile}: ${key}`);
  const ours = createPublicKey(key).export({ type: 'spki', format: 'der' });
  if (!ours.equals(person!.publicKey.export({ type: 'spki', format: 'der' }))) refuse(`${request.keyFile} is not ${request.as}'s key (its public half is not the one configured for ${request.as})`);

  const facts = await gate.facts(batch);
  const first = kept.find((k) => k.decision === 'approve');
  // A second approver signs the same statement: the first one's ceiling and expiry.
  const earlier = first?.statement ? (JSON.parse(first.statement) as Statement) : null;
  if (earlier && Object.keys(request.ceiling).length > 0) refuse(`batch ${batch.id} already has an approval for a ceiling of ${Object.entries(earlier.ceiling).map(([c, v]) => money(v, c)).join(', ')}: a second approver signs that same statement (leave out --ceiling)`);
  const statement: Statement = {
    ...facts.expected,
    ceiling: earlier?.ceiling ?? ceilingOf(request, proposedCeiling(facts, deps.marginPercent)),
    expires_at: earlier?.expires_at ?? batch.approval_expires_at ?? new Date(Date.parse(batch.received_at) + deps.policy.expiresAfterMs).toISOString(),
  };
  if (deps.clock.now() >= Date.parse(statement.expires_at)) refuse(`the approval request of batch ${batch.id} expired at ${statement.expires_at}`);
  const signature = signBytes(key, statementBytes(statement));
  const at = new Date(deps.clock.now()).toISOString();
  await store.recordApproval({ batch_id: batch.id, person: request.as, decision: 'approve', statement: JSON.stringify(statement), signature, reason: null, at });
  await store.appendAudit({ at, actor: request.as, action: 'approved', subject: batch.id, details: { statement, signature } });
  return { statement, verdict: await gate.check((await store.batch(batch.id)) as BatchRecord) };
}

export async function rejectBatch(request: { batch: string; as: string; reason: string }, deps: Omit<ApproveDeps, 'gate' | 'marginPercent'>): Promise<void> {
  const batch = await awaiting(deps.store, request.batch);
  const person = deps.policy.people.get(request.as);
  if (!canApprove(person, '')) refuse(`${request.as} may not reject: only an approver or an admin of the policy may`);
  if (!request.reason.trim()) refuse('give the reason: --reason TEXT');
  await deps.store.recordApproval({
    batch_id: batch.id, person: request.as, decision: 'reject', statement: null, signature: null, reason: request.reason.trim(), at: new Date(deps.clock.now()).toISOString(),
  });
  await deps.store.setApprovalState(batch.id, 'rejected', `rejected by ${request.as}: ${request.reason.trim()}`);
  await deps.store.appendAudit({ at: new Date(deps.clock.now()).toISOString(), actor: request.as, action: 'rejected', subject: batch.id, details: { reason: request.reason.trim() } });
}
