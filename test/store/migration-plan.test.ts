/**
 * Which migrations a database still needs (store/migration-plan.ts), decided
 * once for both databases, and each database's list made of its own migrations
 * and the shared ones (store/shared-migrations.ts): numbered 1, 2, 3, ...
 */
import { describe, expect, it } from 'vitest';
import { DatabaseUnusable } from '../../src/errors.js';
import { pendingMigrations } from '../../src/store/migration-plan.js';
import { PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';

const list = (...versions: number[]) => versions.map((version) => ({ version, name: `m${version}`, sql: '' }));

describe('the migration plan', () => {
  it('gives the migrations not applied yet, in order', () => {
    expect(pendingMigrations(list(1, 2, 3), new Set()).map((m) => m.version)).toEqual([1, 2, 3]);
    expect(pendingMigrations(list(1, 2, 3), new Set([1, 2])).map((m) => m.version)).toEqual([3]);
    expect(pendingMigrations(list(1, 2, 3), new Set([1, 2, 3]))).toEqual([]);
  });

  it('refuses a list with a gap or a version twice', () => {
    expect(() => pendingMigrations(list(1, 3), new Set())).toThrow(/numbered 1, 2, 3/);
    expect(() => pendingMigrations(list(1, 2, 2), new Set())).toThrow(/numbered 1, 2, 3/);
  });

  it('refuses a database at a version this paybatch does not know, as unusable', () => {
    expect(() => pendingMigrations(list(1, 2), new Set([1, 2, 3]))).toThrow(DatabaseUnusable);
    expect(() => pendingMigrations(list(1, 2), new Set([1, 2, 3]))).toThrow(/schema version 3, newer than this paybatch knows \(2\)/);
  });

  it('numbers both databases\' lists, their own migrations and the shared ones, 1 to N', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    expect(PG_MIGRATIONS.map((m) => m.version)).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
    expect(PG_MIGRATIONS[2]?.name).toBe('console sign-ins and the notification outbox (as SQLite migration 9)');
    expect(MIGRATIONS[8]?.name).toBe('console sign-ins and the notification outbox');
  });
});
