/**
 * [1], [D12] The corridors a batch uses, read before it is sent: its ready rows on a corridor the service does not
 * have active end not sent (corridor_inactive), each told in the log.
 */
import type { PayoutClient } from '../api/client.js';
import { Rejected, Retryable } from '../api/errors.js';
import { ConfigError, ServiceUnavailable } from '../errors.js';
import type { BatchCorridor, PipelineStore } from '../store/port.js';
import { REASONS } from '../payout-states.js';
import type { PipelineLog } from './steps.js';

export interface InactiveCorridorDeps {
  store: PipelineStore;
  client: PayoutClient;
  log: PipelineLog;
  /** The stop signal: a stop ends the reads at once. */
  signal: AbortSignal;
}

/**
 * [1], [D12] Before sending, the corridors the batch uses are read; rows on an inactive one are not sent. Which
 * corridors still have ready rows comes from the batch's corridor summary, not from reading the batch: at a
 * million rows that took seconds before the first call, after every restart.
 */
export async function refuseInactiveCorridors(batchId: string, deps: InactiveCorridorDeps): Promise<void> {
  const { store, client } = deps;
  const used = await store.batchCorridors(batchId);
  const countries = new Set(used.map((c) => c.country_code));
  let corridors: Map<string, Awaited<ReturnType<PayoutClient['listCorridors']>>>;
  try {
    corridors = new Map(await Promise.all([...countries].map(async (c) => [c, await client.listCorridors(c, { signal: deps.signal })] as const)));
  } catch (error) {
    const unsent = `nothing of batch ${batchId} was sent, and the next run sends it`;
    if (error instanceof Retryable) throw new ServiceUnavailable(`the payout service did not answer (${error.message}); ${unsent}`, { cause: error });
    // A 404 on a path of the interface: the base URL is wrong (most often its version prefix is missing) [D1].
    if (error instanceof Rejected && error.status === 404) throw new ConfigError(`the payout service has no GET /corridors at ${client.baseUrl}: check service.base_url (with its version prefix, such as /v1) [D1]; ${unsent}`, { cause: error });
    if (error instanceof Rejected) throw new ServiceUnavailable(`the payout service refused to list corridors (${error.message}); ${unsent}`, { cause: error });
    throw error;
  }
  const inactive = used.filter((corridor) => !(corridors.get(corridor.country_code) ?? []).some((c) => c.active
    && c.type === corridor.type && c.input_currency_codes.includes(corridor.input_currency) && c.output_currency_codes.includes(corridor.output_currency)));
  const ended: { line: number; external_id: string; corridor: BatchCorridor }[] = [];
  try {
    for (const corridor of inactive) {
      const detail = `the ${corridor.type} corridor to ${corridor.country_code} for ${corridor.input_currency} to ${corridor.output_currency} is not active at the service`;
      for (const row of await store.endReadyRowsOfCorridor(batchId, corridor, REASONS.corridorInactive, detail)) ended.push({ ...row, corridor });
    }
  } finally {
    // In file order, as the rows were read before; what was ended is told even if a later corridor failed.
    for (const { line, external_id, corridor } of ended.sort((a, b) => a.line - b.line)) {
      deps.log('corridor_inactive', { batch: batchId, line, external_id, country: corridor.country_code, type: corridor.type });
    }
  }
}
