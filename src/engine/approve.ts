/**
 * `paybatch approve` and `paybatch reject`: a person signs, with their own
 * private key (a file that never enters the workspace), a statement of exactly
 * what will be paid; a second approver signs the same statement. The signature
 * is checked against that person's configured public key before it is kept:
 * the wrong key is refused at once rather than holding the batch later.
 */
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { keyFingerprint, privateKeyFrom, signBytes, signatureValid } from '../approvals/keys.js';
import type { Statement } from '../approvals/statement.js';
import { statementBytes, statementDifferences } from '../approvals/statement.js';
import type { ApprovalPolicy, Person } from '../approvals/verify.js';
import { canApprove, sameCeiling } from '../approvals/verify.js';
import { proposedCeiling } from '../approvals/facts.js';
import type { Clock } from '../clock.js';
import { ExitCode, PaybatchError } from '../errors.js';
import { money } from './for-people.js';
import type { ApprovalGate, GateVerdict } from './approval-gate.js';
import type { ApprovalStore, AuditStore, BatchRecord, IntakeStore } from '../store/port.js';
import { currencyDecimals, MAX_MINOR_UNITS, parseMajorAmount } from '../validate/money.js';

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

function ceilingOf(request: Pick<ApproveRequest, 'ceiling'>, proposed: Map<string, bigint | null>): Record<string, string> {
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

/** Who may approve `batch`, and has not already: the person, or a refusal naming why. */
async function approverOf(batch: BatchRecord, as: string, deps: Pick<ApproveDeps, 'store' | 'policy'>): Promise<Person> {
  const person = deps.policy.people.get(as);
  if (!person) return refuse(`${as} is not a person of the approval policy`);
  if (as === batch.submitted_by) refuse(`${as} submitted batch ${batch.id} and cannot approve it: a second person must`);
  if (!canApprove(person, batch.submitted_by ?? deps.policy.inboxSubmitter)) refuse(`${as} may not approve (role ${person.role})`);
  const kept = await deps.store.approvalsOf(batch.id);
  if (kept.some((k) => k.decision === 'approve' && k.person === as)) refuse(`${as} has already approved batch ${batch.id}: a second approver must be another person`);
  return person;
}

/**
 * The statement `as` would sign for `batch` now: what will be paid, the ceiling
 * (a second approver signs the first one's), and until when. Refuses when the
 * person may not approve it.
 */
export async function statementToSign(request: Omit<ApproveRequest, 'keyFile'>, deps: ApproveDeps): Promise<Statement> {
  const batch = await awaiting(deps.store, request.batch);
  await approverOf(batch, request.as, deps);
  const kept = await deps.store.approvalsOf(batch.id);
  const facts = await deps.gate.facts(batch);
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
  return statement;
}

/**
 * Keeps `as`'s signature of `statement`, after checking, again and at this
 * moment, that the person may approve, that the statement is exactly what the
 * batch is now, with the expiry it has (and a second approver the first one's
 * ceiling), and that the signature is theirs. Used by `paybatch approve` and by
 * the console, where the signature was made elsewhere: the private key never
 * reaches paybatch.
 */
export async function recordSignedApproval(request: { batch: string; as: string; statement: Statement; signature: string }, deps: ApproveDeps): Promise<GateVerdict> {
  const { store } = deps;
  const signed = request.statement;
  const batch = await awaiting(store, request.batch);
  const person = await approverOf(batch, request.as, deps);
  const facts = await deps.gate.facts(batch);
  const first = (await store.approvalsOf(batch.id)).find((k) => k.decision === 'approve');
  const earlier = first?.statement ? (JSON.parse(first.statement) as Statement) : null;
  const expiresAt = earlier?.expires_at ?? batch.approval_expires_at ?? new Date(Date.parse(batch.received_at) + deps.policy.expiresAfterMs).toISOString();
  const differences = statementDifferences(signed, { ...facts.expected, ceiling: {}, expires_at: expiresAt });
  if (signed.expires_at !== expiresAt) differences.push(`expires_at: signed ${JSON.stringify(signed.expires_at)}, now ${JSON.stringify(expiresAt)}`);
  if (differences.length > 0) refuse(`the statement signed is not what batch ${batch.id} is now (${differences.join('; ')}): sign the statement shown now`);
  const funded = [...proposedCeiling(facts, deps.marginPercent).keys()].sort();
  const ceilingCurrencies = Object.keys(signed.ceiling).sort();
  if (earlier && !sameCeiling(earlier.ceiling, signed.ceiling)) refuse(`a second approver signs the first one's ceiling (${Object.entries(earlier.ceiling).map(([c, v]) => money(v, c)).join(', ')})`);
  if (JSON.stringify(ceilingCurrencies) !== JSON.stringify(funded) || !Object.values(signed.ceiling).every((v) => /^(0|[1-9]\d{0,17})$/.test(v) && BigInt(v) <= MAX_MINOR_UNITS)) {
    refuse(`the ceiling signed must name each input currency the batch funds (${funded.join(', ')}), each a whole number of minor units`);
  }
  if (deps.clock.now() >= Date.parse(expiresAt)) refuse(`the approval request of batch ${batch.id} expired at ${expiresAt}`);
  if (!signatureValid(person.publicKey, statementBytes(signed), request.signature)) refuse(`the signature is not ${request.as}'s signature of this statement (made with another key, or of other bytes)`);
  const at = new Date(deps.clock.now()).toISOString();
  // The audit entry first, with the fingerprint of the key the signature verified against: an approval kept without
  // its entry (a crash between the two, or a row inserted by hand) is held by the gate (src/engine/approval-records.ts).
  await store.appendAudit({ at, actor: request.as, action: 'approved', subject: batch.id, details: { statement: signed, signature: request.signature, key_fingerprint: keyFingerprint(person.publicKey) } });
  await store.recordApproval({ batch_id: batch.id, person: request.as, decision: 'approve', statement: JSON.stringify(signed), signature: request.signature, reason: null, at });
  return deps.gate.check((await store.batch(batch.id)) as BatchRecord);
}

/** `paybatch approve`: the statement, signed here with the approver's key file, then kept as above. */
export async function approveBatch(request: ApproveRequest, deps: ApproveDeps): Promise<{ statement: Statement; verdict: GateVerdict }> {
  const batch = await awaiting(deps.store, request.batch);
  const person = await approverOf(batch, request.as, deps);
  let pem: string;
  try {
    pem = readFileSync(request.keyFile, 'utf8');
  } catch (error) {
    return refuse(`cannot read the key file ${request.keyFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const key = privateKeyFrom(pem);
  if (typeof key === 'string') return refuse(`${request.keyFile}: ${key}`);
  const ours = createPublicKey(key).export({ type: 'spki', format: 'der' });
  if (!ours.equals(person.publicKey.export({ type: 'spki', format: 'der' }))) refuse(`${request.keyFile} is not ${request.as}'s key (its public half is not the one configured for ${request.as})`);
  const statement = await statementToSign(request, deps);
  const signature = signBytes(key, statementBytes(statement));
  return { statement, verdict: await recordSignedApproval({ batch: request.batch, as: request.as, statement, signature }, deps) };
}

export async function rejectBatch(request: { batch: string; as: string; reason: string }, deps: Omit<ApproveDeps, 'gate' | 'marginPercent'>): Promise<void> {
  const batch = await awaiting(deps.store, request.batch);
  const person = deps.policy.people.get(request.as);
  if (!canApprove(person, '')) refuse(`${request.as} may not reject: only an approver or an admin of the policy may`);
  const reason = request.reason.trim();
  if (!reason) refuse('give the reason: --reason TEXT');
  const at = new Date(deps.clock.now()).toISOString();
  // Who and why, on the trail before the rejection row: the gate counts a rejection only with its entry (approval-records.ts).
  await deps.store.appendAudit({ at, actor: request.as, action: 'rejected', subject: batch.id, details: { reason } });
  await deps.store.recordApproval({ batch_id: batch.id, person: request.as, decision: 'reject', statement: null, signature: null, reason, at });
  await deps.store.setApprovalState(batch.id, 'rejected', `rejected by ${request.as}: ${reason}`);
}
