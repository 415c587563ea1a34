/**
 * A fresh database's schema as text, for comparing the schema migrations make
 * with a snapshot (schema-snapshot.test.ts): SQLite's from sqlite_master and
 * its column pragmas, PostgreSQL's from information_schema.columns, pg_indexes
 * and pg_constraint. Comments and runs of whitespace inside sqlite_master's
 * statements are dropped: a migration's text may be laid out anew (its
 * comments moved), never its schema.
 */
import pg from 'pg';
import type { SqliteDatabase } from '../../src/store/sqlite/database.js';

/** A statement as SQLite keeps it, without its comments and with single spaces. */
export function withoutLayout(sql: string | null): string | null {
  return sql === null ? null : sql.replace(/--[^\n]*/g, ' ').replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
}

export function sqliteSchema(db: SqliteDatabase): string {
  const objects = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name').all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
  const lines: string[] = [];
  for (const object of objects) {
    lines.push(`${object.type} ${object.name} on ${object.tbl_name}: ${withoutLayout(object.sql)}`);
    if (object.type !== 'table') continue;
    for (const column of db.prepare(`PRAGMA table_xinfo(${JSON.stringify(object.name)})`).all() as { cid: number; name: string; type: string; notnull: number; dflt_value: string | null; pk: number; hidden: number }[]) {
      lines.push(`  column ${column.cid} ${column.name} ${column.type}${column.notnull ? ' NOT NULL' : ''} default ${column.dflt_value} pk ${column.pk} hidden ${column.hidden}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export async function postgresSchema(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query(`SELECT table_name, ordinal_position, column_name, data_type, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`);
    const indexes = await client.query("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname");
    const constraints = await client.query(`SELECT c.conrelid::regclass::text AS table_name, c.conname, c.contype, pg_get_constraintdef(c.oid) AS def
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' ORDER BY 1, 2`);
    return [
      ...columns.rows.map((r) => `column ${r.table_name}.${r.ordinal_position} ${r.column_name} ${r.data_type} nullable ${r.is_nullable} default ${r.column_default}`),
      ...indexes.rows.map((r) => `index ${r.tablename} ${r.indexname}: ${r.indexdef}`),
      ...constraints.rows.map((r) => `constraint ${r.table_name} ${r.conname} ${r.contype}: ${r.def}`),
    ].join('\n') + '\n';
  } finally {
    await client.end();
  }
}

/** A column as both databases can say it: whether it refuses null, and its default as written (null when none). */
export interface ColumnFacts {
  notNull: boolean;
  default: string | null;
}

/** Every table's columns, by table and column name. */
export type Columns = Record<string, Record<string, ColumnFacts>>;

/** SQLite's columns; a column of a primary key counts as refusing null, as PostgreSQL's does. */
export function sqliteColumns(db: SqliteDatabase): Columns {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
  return Object.fromEntries(tables.map((table) => [table, Object.fromEntries(
    (db.prepare(`PRAGMA table_info(${JSON.stringify(table)})`).all() as { name: string; notnull: number; dflt_value: string | null; pk: number }[])
      .map((column) => [column.name, { notNull: column.notnull === 1 || column.pk > 0, default: column.dflt_value }]),
  )]));
}

/** PostgreSQL's columns; a serial id's default (its sequence) is said as none, as SQLite's AUTOINCREMENT has none. */
export async function postgresColumns(url: string): Promise<Columns> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT table_name, column_name, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`);
    const columns: Columns = {};
    for (const row of rows as { table_name: string; column_name: string; is_nullable: string; column_default: string | null }[]) {
      const serial = row.column_default?.startsWith('nextval(') ?? false;
      (columns[row.table_name] ??= {})[row.column_name] = { notNull: row.is_nullable === 'NO', default: serial ? null : row.column_default };
    }
    return columns;
  } finally {
    await client.end();
  }
}
