import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/store/sqlite/database.js';

const MIGRATIONS = [
  { version: 1, name: 'notes', sql: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)' },
  { version: 2, name: 'notes-author', sql: 'ALTER TABLE notes ADD COLUMN author TEXT' },
];

describe('the state database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-db-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is created readable by its owner only, WAL files included, in WAL mode with synchronous NORMAL', () => {
    const file = join(dir, 'paybatch.db');
    const db = openDatabase(file);
    migrate(db, MIGRATIONS);
    db.prepare('INSERT INTO notes (body) VALUES (?)').run('x');
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    db.close();
    const reopened = openDatabase(file);
    for (const path of [file, `${file}-wal`, `${file}-shm`]) {
      try {
        expect((statSync(path).mode & 0o777).toString(8), path).toBe('600');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    reopened.close();
  });

  it('applies numbered migrations once, in order, and records them', () => {
    const db = openDatabase(join(dir, 'migrations.db'));
    expect(migrate(db, MIGRATIONS.slice(0, 1))).toEqual([1]);
    expect(migrate(db, MIGRATIONS)).toEqual([2]);
    expect(migrate(db, MIGRATIONS)).toEqual([]);
    expect(db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()).toEqual([
      { version: 1, name: 'notes' },
      { version: 2, name: 'notes-author' },
    ]);
    db.prepare('INSERT INTO notes (body, author) VALUES (?, ?)').run('x', 'y');
    db.close();
  });

  it('rolls a failing migration back whole, recording nothing', () => {
    const db = openDatabase(join(dir, 'failing.db'));
    migrate(db, MIGRATIONS.slice(0, 1));
    const broken = [...MIGRATIONS.slice(0, 1), { version: 2, name: 'broken', sql: 'CREATE TABLE half (id INTEGER); THIS IS NOT SQL' }];
    expect(() => migrate(db, broken)).toThrow();
    expect(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'").pluck().get()).toBe(0);
    expect(db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(1);
    db.close();
  });

  it('refuses gaps in the numbering and a database newer than the code', () => {
    const db = openDatabase(join(dir, 'newer.db'));
    expect(() => migrate(db, [MIGRATIONS[1] as (typeof MIGRATIONS)[number]])).toThrow(/numbered 1, 2, 3/);
    migrate(db, MIGRATIONS);
    expect(() => migrate(db, MIGRATIONS.slice(0, 1))).toThrow(/newer than this paybatch knows/);
    db.close();
  });
});
