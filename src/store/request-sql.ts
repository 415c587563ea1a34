/**
 * The few fields the store's SQL reads inside a stored request (the corridor
 * summary's country and type, the sender a sender.* event names), in each
 * database's functions. A request is kept compact (batch/request-text.ts: a
 * JSON array, a field known by its place) or, for rows stored before that or
 * not fit for it, as a JSON object: its first character tells which.
 * Each field read here is one every valid request has, so the compact form's
 * 0 for "absent" never stands for it.
 */
import { COMPACT_PLACES } from '../batch/request-text.js';

export type RequestField = keyof typeof COMPACT_PLACES;

/** The same fields' paths in a request kept as a JSON object. */
const OBJECT_PATHS: Record<RequestField, readonly string[]> = {
  type: ['type'],
  recipientCountry: ['recipient', 'country_code'],
  senderExternalId: ['sender', 'external_id'],
};

/** SQLite: json_extract by the path of either form. */
export function sqliteRequestField(field: RequestField, column = 'request'): string {
  const compact = COMPACT_PLACES[field].map((at) => `[${at}]`).join('');
  return `(CASE WHEN substr(${column}, 1, 1) = '[' THEN json_extract(${column}, '$${compact}') ELSE json_extract(${column}, '$.${OBJECT_PATHS[field].join('.')}') END)`;
}

/**
 * PostgreSQL: json, not jsonb: one field read from each row, and json reads it without building the whole document
 * (a third faster). Its #>> takes an array's places as it takes an object's keys.
 */
export function postgresRequestField(field: RequestField, column = 'request'): string {
  return `(CASE WHEN left(${column}, 1) = '[' THEN ${column}::json #>> '{${COMPACT_PLACES[field].join(',')}}' ELSE ${column}::json #>> '{${OBJECT_PATHS[field].join(',')}}' END)`;
}
