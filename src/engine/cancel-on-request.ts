/**
 * [1], [D11] A cancellation a person asked for (`paybatch cancel`): the
 * transaction is read first and checked to be the row's own, then the row's
 * intent (cancelling) is committed by compare-and-set, then DELETE is sent. A
 * DELETE whose answer was lost is resolved by reading; a refusal puts the row
 * back where it was.
 */
import type { ServiceTransaction } from '../api/answers.js';
import type { CallLimits, PayoutClient } from '../api/client.js';
import { AuthenticationRefused, OutcomeUnknown, Rejected, Retryable } from '../api/errors.js';
import type { Clock } from '../clock.js';
import type { EngineConfig } from '../config/config.js';
import type { PipelineRow } from '../store/port.js';
import { checkRowAnswer, describeMismatches } from './answer-check.js';
import { hold } from './decide.js';
import { cancelAccepted, cancelOnRequest as cancelOnRequestDecision, cancelOnRequestUndone } from './step-decisions.js';
import type { PipelineLog, RowSteps } from './steps.js';
import { isUnpaidFinalState } from '../payout-states.js';

export interface CancelAnswer {
  done: boolean;
  state: string;
  reason: string;
}

export interface CancelDeps {
  client: PayoutClient;
  clock: Clock;
  engine: EngineConfig;
  log: PipelineLog;
  steps: RowSteps;
  limits: CallLimits;
}

const ATTEMPTS = 5;

export async function cancelOnRequest(row: PipelineRow, by: string | null, deps: CancelDeps): Promise<CancelAnswer> {
  const { client, steps, limits } = deps;
  const id = row.transaction_id;
  if (id === null) return { done: false, state: row.state ?? row.phase, reason: 'no transaction of its own is known (an answer named another one); an unfunded transaction is cancelled by the service after an hour [1]' };
  let tx: ServiceTransaction;
  try {
    tx = await client.getTransaction(id, limits);
  } catch (error) {
    return unanswered(row, error);
  }
  const mismatches = checkRowAnswer(row, tx);
  if (mismatches.length > 0) return { done: false, state: row.state ?? '', reason: describeMismatches('the read before cancelling', mismatches) };
  if (!tx.may_cancel) return { done: false, state: tx.state, reason: `the service does not allow it in state ${tx.state} (may_cancel is false)` };
  const from = row.phase;
  // What it was when cancelled stays in the reason: a corrections file says what to fix from it.
  const detail = `cancelled on request${by ? ` by ${by}` : ''} (it was ${tx.state}${tx.state_reason_code ? `: ${tx.state_reason_code}` : ''})`;
  const at = deps.clock.now();
  const cancelling = await steps.apply(row, (current) => cancelOnRequestDecision(current, from, { by, detail, state: tx.state }, at, deps.engine.polling));
  if (!cancelling) return { done: false, state: tx.state, reason: 'the row is being worked on; try again' };
  return sendCancellation(row, cancelling, { by, state: tx.state }, deps);
}

/** Not answered: nothing changed. A refusal to authenticate, or anything else, is not this function's to hide. */
function unanswered(row: PipelineRow, error: unknown): CancelAnswer {
  if (error instanceof AuthenticationRefused || !(error instanceof OutcomeUnknown || error instanceof Retryable)) throw error;
  return { done: false, state: row.state ?? '', reason: `the service did not answer (${error.message}); nothing changed, try again` };
}

/**
 * Sends the DELETE for a row whose intent (cancelling) is committed, up to ATTEMPTS times while unanswered. Accepted
 * for the row's own transaction: recorded (decide's cancelAgain sends it no more). Answered with another transaction
 * or other amounts: the row is held for a person, as any answer that does not match. Refused, or never answered: the
 * row goes back to where it was, unless the service accepted a cancellation of it meanwhile (the engine's, sent again).
 */
async function sendCancellation(row: PipelineRow, cancelling: PipelineRow, asked: { by: string | null; state: string }, deps: CancelDeps): Promise<CancelAnswer> {
  const { client, steps, limits } = deps;
  const id = row.transaction_id as string;
  const where = { batch: row.batch_id, line: row.line, transaction: id };
  const requested = (): CancelAnswer => {
    deps.log('cancel_requested', { ...where, state: asked.state, by: asked.by });
    return { done: true, state: asked.state, reason: 'cancellation requested' };
  };
  const putBack = async (): Promise<boolean> => {
    let acceptedMeanwhile = false;
    await steps.apply(cancelling, (current) => {
      acceptedMeanwhile = current.phase === 'cancelling' && Boolean(current.cancel_accepted_at);
      return cancelOnRequestUndone(current, row);
    });
    return !acceptedMeanwhile;
  };
  let failure: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const answer = await client.cancelTransaction(id, limits);
      const mismatches = checkRowAnswer(row, answer);
      if (mismatches.length > 0) {
        const detail = describeMismatches('the cancel answer', mismatches);
        await steps.apply(cancelling, (current) => hold(current, 'cancel', mismatches, deps.clock.now()));
        deps.log('answer_mismatch', { ...where, asked_in: 'cancel', detail, fields: mismatches });
        return { done: false, state: asked.state, reason: `${detail}; the row is held for a person` };
      }
      await steps.apply(cancelling, (current) => cancelAccepted(current, deps.clock.now()));
      return requested();
    } catch (error) {
      if (error instanceof Rejected) {
        // Refused (no longer cancellable): the row goes back to where it was.
        return (await putBack()) ? { done: false, state: asked.state, reason: error.message } : requested();
      }
      if (!(error instanceof OutcomeUnknown || error instanceof Retryable)) throw error;
      failure = error;
    }
    // [D11] Whether a DELETE whose answer was lost took effect, the transaction's state tells.
    const now = await client.getTransaction(id, limits).catch(() => null);
    if (now && checkRowAnswer(row, now).length === 0 && isUnpaidFinalState(now.state)) return requested();
  }
  return (await putBack()) ? unanswered(row, failure) : requested();
}
