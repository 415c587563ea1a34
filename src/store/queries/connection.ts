/**
 * The one thing the query modules of queries/ need of a database: run a
 * statement and give its rows or its count. SQLite (sqlite/connection.ts) and
 * PostgreSQL (postgres/client.ts) both provide it, so a statement the two
 * dialects share is written once, with `?` placeholders (PostgreSQL's client
 * numbers them `$1`, `$2`, ...). What differs is named in `Dialect`, and
 * nowhere else: few, and explicit.
 */
import type { RequestField } from '../request-sql.js';
import { postgresRequestField, sqliteRequestField } from '../request-sql.js';

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * SQLite has no statistics here (ANALYZE is never run) and picks the
   * primary key where an index of phases would go straight to the rows: it is
   * told which index to use. PostgreSQL plans for itself: nothing.
   */
  indexedBy(index: string): string;
  /** A field of the stored request (store/request-sql.ts). */
  requestField(field: RequestField): string;
}

export interface SqlConnection {
  readonly dialect: Dialect;
  all<T>(text: string, params?: readonly unknown[]): Promise<T[]>;
  first<T>(text: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement; returns how many rows it changed. */
  run(text: string, params?: readonly unknown[]): Promise<number>;
}

export const SQLITE: Dialect = {
  name: 'sqlite',
  indexedBy: (index) => `INDEXED BY ${index}`,
  requestField: (field) => sqliteRequestField(field),
};

export const POSTGRES: Dialect = {
  name: 'postgres',
  indexedBy: () => '',
  requestField: (field) => postgresRequestField(field),
};

/** `?, ?, ?` for a list. */
export const marks = (values: readonly unknown[]): string => values.map(() => '?').join(', ');

const numberedCache = new Map<string, string>();

/**
 * `?` placeholders numbered as PostgreSQL wants them (`$1`, `$2`, ...), in
 * order, outside quoted text; cached, so that a statement is rewritten once.
 */
export function numbered(text: string): string {
  let rewritten = numberedCache.get(text);
  if (rewritten === undefined) {
    let n = 0;
    let quoted = false;
    rewritten = '';
    for (const ch of text) {
      if (ch === "'") quoted = !quoted;
      rewritten += ch === '?' && !quoted ? `$${++n}` : ch;
    }
    numberedCache.set(text, rewritten);
  }
  return rewritten;
}
