/**
 * What is kept in the outbox for a notification, and how each channel spells it.
 * Pure. The outbox keeps one payload for every channel; each sender renders it
 * when it sends, so a retry sends the same words.
 */
import type { NotificationRecord } from '../store/port.js';
import type { Notification } from './events.js';

/** A notification as claimed from the outbox, ready to send. */
export interface Outgoing {
  id: number;
  channel: string;
  event: string;
  dedupe_key: string;
  /** This attempt, the first one being 1. */
  attempt: number;
  subject: string;
  text: string;
  data: Record<string, unknown>;
  /** When the fact was observed (ISO 8601). */
  occurred_at: string;
}

interface Payload {
  subject: string;
  text: string;
  data: Record<string, unknown>;
  occurred_at: string;
}

/** The outbox's payload column for a notification observed at `at` (ms since the epoch). */
export function payloadOf(notification: Notification, at: number): string {
  const payload: Payload = { subject: notification.subject, text: notification.text, data: notification.data, occurred_at: new Date(at).toISOString() };
  return JSON.stringify(payload);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The claimed record as something to send, or why it cannot be (a payload this paybatch cannot read). */
export function outgoingOf(record: NotificationRecord): Outgoing | string {
  let payload: unknown;
  try {
    payload = JSON.parse(record.payload);
  } catch {
    return 'its payload is not JSON';
  }
  if (!isObject(payload) || typeof payload.subject !== 'string' || typeof payload.text !== 'string' || !isObject(payload.data)) return 'its payload has no subject, text and data';
  const occurredAt = typeof payload.occurred_at === 'string' ? payload.occurred_at : new Date(record.created_at).toISOString();
  return {
    id: record.id, channel: record.channel, event: record.event, dedupe_key: record.dedupe_key, attempt: record.attempts + 1,
    subject: payload.subject, text: payload.text, data: payload.data, occurred_at: occurredAt,
  };
}

/**
 * The signed webhook's body. `dedupe_key` names the fact: delivery is at least
 * once (an answer lost on the way is sent again), so a receiver keeps the keys
 * it has acted on.
 */
export function webhookBody(n: Outgoing): string {
  return JSON.stringify({ event: n.event, dedupe_key: n.dedupe_key, occurred_at: n.occurred_at, attempt: n.attempt, subject: n.subject, text: n.text, data: n.data });
}

/** Slack's three control characters, escaped as its incoming webhooks require. */
const chatEscape = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A chat incoming webhook's body (Slack-compatible): plain text, subject first. */
export function chatBody(n: Outgoing): string {
  return JSON.stringify({ text: chatEscape(`${n.subject}\n${n.text}`) });
}

/** A mail's subject and plain-text body. */
export function emailContent(n: Outgoing): { subject: string; text: string } {
  return {
    subject: `paybatch: ${n.subject}`,
    text: `${n.text}\n\n-- \npaybatch, ${n.event} at ${n.occurred_at} (${n.dedupe_key})\n`,
  };
}
