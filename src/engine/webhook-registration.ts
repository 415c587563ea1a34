/**
 * `paybatch webhooks sync`: one webhook per event type paybatch needs [6], at
 * the public URL of its receiver. A type already registered for another URL is
 * somebody else's (another installation, an earlier address): it is reported,
 * and replaced only when asked.
 */
import type { PayoutClient, WebhookRecord } from '../api/client.js';
import { EVENT_TYPES } from '../api/states.js';

export interface SyncReport {
  registered: string[];
  kept: string[];
  replaced: { event_type: string; was: string }[];
  conflicts: { event_type: string; uri: string }[];
}

export async function syncWebhooks(client: Pick<PayoutClient, 'listWebhooks' | 'registerWebhook' | 'deleteWebhook'>, uri: string, options: { replace?: boolean } = {}): Promise<SyncReport> {
  const existing = new Map<string, WebhookRecord>();
  for (const webhook of await client.listWebhooks()) existing.set(webhook.event_type, webhook);
  const report: SyncReport = { registered: [], kept: [], replaced: [], conflicts: [] };
  for (const eventType of EVENT_TYPES) {
    const current = existing.get(eventType);
    if (current?.uri === uri) {
      report.kept.push(eventType);
      continue;
    }
    if (current && !options.replace) {
      report.conflicts.push({ event_type: eventType, uri: current.uri });
      continue;
    }
    if (current) {
      await client.deleteWebhook(current.id);
      report.replaced.push({ event_type: eventType, was: current.uri });
    } else {
      report.registered.push(eventType);
    }
    await client.registerWebhook(eventType, uri);
  }
  return report;
}

export function renderSync(report: SyncReport, uri: string): string {
  const lines = [`webhooks for ${uri}: ${report.registered.length} registered, ${report.replaced.length} replaced, ${report.kept.length} already in place, ${report.conflicts.length} held by another address`];
  for (const r of report.replaced) lines.push(`  replaced ${r.event_type} (was ${r.was})`);
  for (const c of report.conflicts) lines.push(`  ${c.event_type} is registered for ${c.uri}: not changed (use --replace to take it over)`);
  return `${lines.join('\n')}\n`;
}
