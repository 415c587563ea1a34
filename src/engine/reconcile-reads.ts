/**
 * What a reconciliation reads from the service: every unsettled transaction,
 * and the service's ledger where it offers one. Neither read throws when the
 * service cannot be reached or refuses: it says the check did not run, and
 * why, so that the report is written and names what it could not compare
 * (src/reports/reconciliation-verdict.ts) instead of failing or, worse,
 * saying "0 differences" of checks it never made.
 */
import { request } from 'undici';
import type { ServiceTransaction } from '../api/answers.js';
import type { PayoutClient } from '../api/client.js';
import { AuthenticationRefused, OutcomeUnknown, Rejected, Retryable } from '../api/errors.js';
import { ServiceUnavailable } from '../errors.js';
import type { ServiceLedgerEntry } from '../reports/reconciliation-checks.js';

export interface StatesRead {
  answers: Map<string, ServiceTransaction | null>;
  /** Null when every transaction was read; otherwise why the reads stopped. */
  stopped: string | null;
  /** The service's failure that stopped them, alone. */
  failure?: string;
}

/** A failure of the service, not of paybatch: the check could not run, the report is still written. */
const serviceFailure = (error: unknown): boolean =>
  error instanceof ServiceUnavailable || error instanceof AuthenticationRefused || error instanceof Retryable || error instanceof OutcomeUnknown;

/** Reads each transaction once, spaced to stay within the polling budget; null when the service does not know it. */
export async function readUnsettled(
  ids: readonly string[],
  deps: { client: Pick<PayoutClient, 'getTransaction'>; readsPerSecond: number; sleep?: (ms: number) => Promise<void> },
): Promise<StatesRead> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const answers = new Map<string, ServiceTransaction | null>();
  const gap = Math.ceil(1000 / deps.readsPerSecond);
  for (const [index, id] of ids.entries()) {
    if (index > 0) await sleep(gap);
    try {
      answers.set(id, await deps.client.getTransaction(id));
    } catch (error) {
      if (serviceFailure(error)) return { answers, stopped: `read ${answers.size} of ${ids.length}: ${(error as Error).message}`, failure: (error as Error).message };
      if (!(error instanceof Rejected)) throw error;
      answers.set(id, null);
    }
  }
  return { answers, stopped: null };
}

export type LedgerRead = { entries: (ServiceLedgerEntry & { at: number })[] } | { notRead: string };

/** The service's ledger, every page of it; `notRead` says why not (not offered, unreachable, refused). */
export async function fetchLedger(url: string | null): Promise<LedgerRead> {
  if (url === null) return { notRead: 'not offered by the service' };
  const entries: (ServiceLedgerEntry & { at: number; seq: number })[] = [];
  try {
    for (let after = 0; ;) {
      const target = new URL(url);
      target.searchParams.set('after', String(after));
      target.searchParams.set('limit', '10000');
      const response = await request(target, { headersTimeout: 15_000, bodyTimeout: 15_000 });
      if (response.statusCode !== 200) {
        await response.body.dump();
        return { notRead: `not read: the service ledger answered ${response.statusCode}` };
      }
      const page = (await response.body.json()) as unknown;
      if (!Array.isArray(page)) return { notRead: 'not read: the service ledger answered something other than a list of entries' };
      if (page.length === 0) return { entries };
      // Each page must move on: a ledger whose pages never get past where they were asked to start is not read for ever.
      const next = (page[page.length - 1] as { seq?: unknown }).seq;
      if (typeof next !== 'number' || !Number.isSafeInteger(next) || next <= after) return { notRead: `not read: the service ledger's page after ${after} ended at ${JSON.stringify(next)}, not past it` };
      entries.push(...(page as (ServiceLedgerEntry & { at: number; seq: number })[]));
      after = next;
    }
  } catch (error) {
    return { notRead: `not read: the service ledger could not be reached (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
}
