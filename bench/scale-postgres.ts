/**
 * `BENCH_STORE=postgres npm run bench:scale`: intake of the large batch to
 * accepted on PostgreSQL against the same on SQLite, in the same run, in
 * BENCH_ROUNDS rounds (default 2) that alternate which store goes first; the
 * best of each against the other (goal, issue 42: PostgreSQL within 2× of
 * SQLite). Each PostgreSQL intake has a database of its own (paybatch_bench_*),
 * dropped after it.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { benchDatabase } from './bench-database.js';

/** Intake of the large file to accepted in a workspace of its own named `name`, on PostgreSQL at `url` (else SQLite): seconds, null when it never was. */
export type IntakeRun = (name: string, url: string | null) => Promise<number | null>;

const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const seconds = (s: number | null): string => (s === null ? 'never' : `${s.toFixed(1)} s`);

/** What the intake left in the database: its rows, and the batch's count of them (added page by page with them). */
async function stored(url: string): Promise<{ rows: number; total: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = (await client.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM rows')).rows[0]?.n ?? 0;
    const total = (await client.query<{ n: number }>('SELECT COALESCE(SUM(rows_total), 0)::int AS n FROM batches')).rows[0]?.n ?? 0;
    return { rows, total };
  } finally {
    await client.end();
  }
}

async function onPostgres(round: number, intake: IntakeRun): Promise<number | null> {
  const database = await benchDatabase(`intake_${round}`);
  try {
    const took = await intake(`postgres-${round}`, database.url);
    const { rows, total } = await stored(database.url);
    console.log(`  round ${round}  PostgreSQL  ${seconds(took)} to accepted; ${rows} rows stored, the batch counts ${total}  (load average ${loadAverage()})`);
    return took;
  } finally {
    await database.drop();
  }
}

async function onSqlite(round: number, intake: IntakeRun): Promise<number | null> {
  const took = await intake(`sqlite-${round}`, null);
  console.log(`  round ${round}  SQLite      ${seconds(took)} to accepted  (load average ${loadAverage()})`);
  return took;
}

/** Prints every round and the best of each against the other; false when the goal is missed. */
export async function comparePostgresIntake(rows: number, rounds: number, intake: IntakeRun): Promise<boolean> {
  const sqlite: number[] = [];
  const postgres: number[] = [];
  const keep = (into: number[], took: number | null): void => {
    if (took !== null) into.push(took);
  };
  for (let round = 1; round <= rounds; round++) {
    // Alternating which goes first: the machine's drift over a round falls on both.
    if (round % 2 === 1) {
      keep(sqlite, await onSqlite(round, intake));
      keep(postgres, await onPostgres(round, intake));
    } else {
      keep(postgres, await onPostgres(round, intake));
      keep(sqlite, await onSqlite(round, intake));
    }
  }
  if (sqlite.length === 0 || postgres.length === 0) {
    console.log(`  intake on PostgreSQL against SQLite, ${rows} rows: an intake never reached accepted  (goal: within 2×: NOT MET)`);
    return false;
  }
  const best = { sqlite: Math.min(...sqlite), postgres: Math.min(...postgres) };
  const ratio = best.postgres / best.sqlite;
  const met = ratio <= 2;
  console.log(`  intake on PostgreSQL against SQLite, ${rows} rows  best ${best.postgres.toFixed(1)} s against ${best.sqlite.toFixed(1)} s (${(rows / best.postgres).toFixed(0)} against ${(rows / best.sqlite).toFixed(0)} rows/s): ${ratio.toFixed(2)}×  (goal: within 2×: ${met ? 'met' : 'NOT MET'})`);
  return met;
}
