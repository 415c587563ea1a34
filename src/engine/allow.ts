/**
 * `paybatch allow`: a person says a row held as a possible duplicate is meant.
 * Its twins are looked for again as they stand now, and decideDuplicate
 * (duplicates.ts) is asked with the allowance: a twin that may still pay keeps
 * the row held whoever asks. Otherwise the row is made ready by
 * compare-and-set, the allowance kept and written to the audit trail with it.
 * With approvals on, a row is allowed only before anyone approved its batch:
 * approvers see the allowances in the preview and sign them (the statement's
 * duplicates_sha256, approvals/duplicates-digest.ts). After an approval it is
 * refused rather than voiding the signatures: a batch whose signatures no
 * longer match is held for good, so it could only hold the batch.
 */
import type { Clock } from '../clock.js';
import type { BatchConfig } from '../config/config.js';
import { DUPLICATE_HOLD } from '../payout-states.js';
import type { ApprovalStore, DuplicateStore, IntakeStore, Twin } from '../store/port.js';
import { recipientKey } from '../validate/recipient-key.js';
import { decideDuplicate, describeTwin, windowStart } from './duplicates.js';

export interface AllowRequest {
  batch: string;
  externalId: string;
  reason: string;
  person: string;
}

export type AllowOutcome =
  | { kind: 'allowed'; line: number; twins: Twin[] }
  | { kind: 'refused'; line: number | null; why: string };

export async function allowRow(request: AllowRequest, deps: { store: IntakeStore & DuplicateStore & Pick<ApprovalStore, 'approvalsOf'>; clock: Clock; batch: Pick<BatchConfig, 'duplicate_window' | 'on_duplicate'> }): Promise<AllowOutcome> {
  const batch = await deps.store.batch(request.batch);
  if (!batch) return { kind: 'refused', line: null, why: `no batch ${request.batch}` };
  // With approvals on, approvers see the allowances before they sign (preview): none is added under their signatures.
  if (batch.approval !== null && (batch.approval !== 'awaiting' || (await deps.store.approvalsOf(batch.id)).length > 0)) {
    return { kind: 'refused', line: null, why: `batch ${batch.id} is under approval (${batch.approval}) and approvals were given: a row is allowed before anyone approves, so that approvers see it; submit the rows again in a new file` };
  }
  let found = null;
  for await (const row of deps.store.rows(request.batch)) {
    if (row.external_id === request.externalId) {
      found = row;
      break;
    }
  }
  if (!found) return { kind: 'refused', line: null, why: `batch ${request.batch} has no row with external_id ${request.externalId}` };
  if (found.phase !== DUPLICATE_HOLD || !found.request) return { kind: 'refused', line: found.line, why: `line ${found.line} is not held as a possible duplicate (it is ${found.phase}): nothing to allow` };
  const key = recipientKey(found.request);
  const since = windowStart(Date.parse(batch.received_at), deps.batch.duplicate_window) ?? '';
  const twins = key === null ? [] : await deps.store.twinsOf({
    batch_id: batch.id, line: found.line, key, currency: found.request.output_currency_code, amount: found.request.output_amount_in_cents,
  }, since, 20);
  const at = new Date(deps.clock.now()).toISOString();
  const allowance = { person: request.person, reason: request.reason, at };
  const decision = decideDuplicate(twins, deps.batch.on_duplicate, allowance);
  if (decision.action === 'hold') {
    return { kind: 'refused', line: found.line, why: `its twin ${describeTwin(decision.twin)} may still pay: it stays held until that one ends (wait for it, ask the service, or cancel it); it is never paid twice by hand` };
  }
  if (!(await deps.store.allowDuplicate(batch.id, found.line, allowance))) return { kind: 'refused', line: found.line, why: `line ${found.line} was allowed or cancelled meanwhile` };
  return { kind: 'allowed', line: found.line, twins };
}
