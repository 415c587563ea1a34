/**
 * Reading the service's answers: bare objects or the live service's
 * `{object, meta}` wrapping [D4]; validation errors in each of the shapes of
 * [D5]. Pure functions.
 */
import type { ServiceErrorItem } from './errors.js';
import { redactAccountNumbers } from './redact.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** [D4] The object itself, and the meta beside it when wrapped. */
export function unwrap(body: unknown): { object: unknown; meta: Record<string, unknown> | undefined } {
  if (isObject(body) && 'object' in body && (Object.keys(body).length === 1 || 'meta' in body)) {
    return { object: body.object, meta: isObject(body.meta) ? body.meta : undefined };
  }
  const meta = isObject(body) && isObject(body.meta) ? body.meta : undefined;
  return { object: body, meta };
}

function messageOf(item: unknown): string {
  if (typeof item === 'string') return redactAccountNumbers(item);
  if (isObject(item) && typeof item.error === 'string') return redactAccountNumbers(item.error);
  if (isObject(item) && typeof item.message === 'string') return redactAccountNumbers(item.message);
  return redactAccountNumbers(JSON.stringify(item));
}

/** [D5] Every shape of `errors`, flattened to field and message. */
export function errorItems(body: unknown): ServiceErrorItem[] {
  const { object } = unwrap(body);
  const holder = isObject(object) && 'errors' in object ? object : isObject(body) ? body : {};
  const errors = (holder as Record<string, unknown>).errors;
  if (Array.isArray(errors)) return errors.map((item) => ({ field: 'base', message: messageOf(item) }));
  if (isObject(errors)) {
    return Object.entries(errors).flatMap(([field, messages]) =>
      (Array.isArray(messages) ? messages : [messages]).map((item) => ({ field, message: messageOf(item) })));
  }
  if (typeof errors === 'string') return [{ field: 'base', message: errors }];
  return [];
}

/** [2.5], [D8] The fields of a transaction paybatch relies on; the rest is kept as it came. */
export interface ServiceTransaction {
  id: string;
  external_id: string;
  state: string;
  state_reason: string | null;
  state_reason_code: string | null;
  input_amount_in_cents: string | null;
  input_currency: string | null;
  output_amount_in_cents: string | null;
  output_currency: string | null;
  /** What came back to the balance after a cancellation, when the service says [3.1]. */
  refunded_amount_in_cents: string | null;
  may_cancel: boolean;
  /** [D8] The service's updated_at, as an ISO 8601 UTC string so that times compare as text; null when absent or unreadable. */
  updated_at: string | null;
  raw: Record<string, unknown>;
}

const amount = (v: unknown): string | null => (typeof v === 'string' && /^\d{1,18}$/.test(v) ? v : typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A transaction object, or null when the answer does not have the shape of one. */
export function parseTransaction(object: unknown): ServiceTransaction | null {
  if (!isObject(object) || typeof object.id !== 'string' || typeof object.state !== 'string' || typeof object.external_id !== 'string') return null;
  const details = isObject(object.state_reason_details) ? object.state_reason_details : {};
  return {
    id: object.id,
    external_id: object.external_id,
    state: object.state,
    // The service's own words, kept for people: an account number quoted in them is shortened.
    state_reason: object.state_reason === undefined || object.state_reason === null ? null : redactAccountNumbers(String(object.state_reason)),
    state_reason_code: text(details.code),
    input_amount_in_cents: amount(object.input_amount_in_cents),
    input_currency: text(object.input_currency ?? object.input_currency_code),
    output_amount_in_cents: amount(object.output_amount_in_cents),
    output_currency: text(object.output_currency ?? object.output_currency_code),
    refunded_amount_in_cents: amount(object.refunded_amount_in_cents),
    may_cancel: object.may_cancel === true,
    updated_at: typeof object.updated_at === 'string' && !Number.isNaN(Date.parse(object.updated_at)) ? new Date(object.updated_at).toISOString() : null,
    raw: object,
  };
}

export function parseList(object: unknown): unknown[] | null {
  return Array.isArray(object) ? object : null;
}
