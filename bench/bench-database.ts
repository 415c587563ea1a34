/**
 * A PostgreSQL database of its own for a benchmark, named paybatch_bench_*, on
 * BENCH_DATABASE_URL's server (else PAYBATCH_TEST_DATABASE_URL's, else the local
 * one); drop() removes it, closing what is still connected to it.
 */
import pg from 'pg';

export const BENCH_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.PAYBATCH_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** `label`: letters, digits and underscores only (it goes into the name as it is). */
export async function benchDatabase(label: string): Promise<BenchDatabase> {
  const name = `paybatch_bench_${label}_${process.pid}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
