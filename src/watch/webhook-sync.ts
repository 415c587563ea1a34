/** The daemon's webhooks registered at the service for its receiver's URL, and what came of it in the log. */
import { AuthenticationRefused } from '../api/errors.js';
import type { PayoutClient } from '../api/client.js';
import type { Clock } from '../clock.js';
import { syncWebhooks } from '../engine/webhook-registration.js';
import type { PipelineLog } from '../engine/pipeline.js';

/** When the webhooks were synced, or when to try again (polling carries on meanwhile). */
export async function registerWebhooks(deps: { client: PayoutClient; clock: Clock; log: PipelineLog }, url: string, retryMs: number): Promise<{ syncedAt: number } | { retryAt: number }> {
  const { log, clock, client } = deps;
  try {
    const report = await syncWebhooks(client, url);
    log('webhooks_synced', { url, registered: report.registered.length, kept: report.kept.length, held_elsewhere: report.conflicts.length });
    for (const conflict of report.conflicts) log('webhook_held_elsewhere', { event_type: conflict.event_type, uri: conflict.uri });
    return { syncedAt: clock.now() };
  } catch (error) {
    if (error instanceof AuthenticationRefused) throw error;
    log('webhooks_not_synced', { reason: (error as Error).message, retry_in_s: retryMs / 1000 });
    return { retryAt: clock.now() + retryMs };
  }
}
