/** [D13] Webhook registrations: one per event type [6]. */
import { randomUUID } from 'node:crypto';
import { SENDER_STATES, TRANSACTION_STATES } from './model.js';
import type { Reply } from './reply.js';
import { failure, invalid, reply } from './reply.js';
import type { SandboxStore } from './store.js';

export const EVENT_TYPES: readonly string[] = [
  ...TRANSACTION_STATES.map((s) => `transaction.${s}`),
  'transaction.paid_out',
  ...SENDER_STATES.map((s) => `sender.${s}`),
];

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export function registerWebhook(store: SandboxStore, body: unknown, now: number): Reply {
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const eventType = input.event_type;
  const uri = input.uri;
  if (typeof eventType !== 'string' || !EVENT_TYPES.includes(eventType)) {
    errors.event_type = ['must be transaction.<state>, transaction.paid_out or sender.<state>'];
  }
  if (typeof uri !== 'string' || !isHttpUrl(uri)) errors.uri = ['must be an http or https URL'];
  if (Object.keys(errors).length > 0) return invalid(errors);
  return store.atomic(() => {
    if (store.webhookForEvent(eventType as string)) return invalid({ event_type: ['already has a webhook registered'] });
    const webhook = { id: `wh_${randomUUID().replace(/-/g, '')}`, event_type: eventType as string, uri: uri as string, created_at: now };
    store.insertWebhook(webhook);
    return reply(201, { id: webhook.id, event_type: webhook.event_type, uri: webhook.uri });
  });
}

export function listWebhooks(store: SandboxStore): Reply {
  return reply(200, store.webhooks().map(({ id, event_type, uri }) => ({ id, event_type, uri })));
}

export function deleteWebhook(store: SandboxStore, id: string): Reply {
  return store.deleteWebhook(id) ? reply(204) : failure(404, `webhook ${id} not found`);
}
