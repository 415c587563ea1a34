/**
 * PostgreSQL for tests: a fresh database per test file (or test), dropped after.
 * Reached at PAYBATCH_TEST_DATABASE_URL, else the local default. Where it is not
 * reachable the tests say so in one line and are skipped, except under CI=true,
 * where they must run: there an unreachable server fails them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.PAYBATCH_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<string | null> | undefined;

/** null when the server answers; the reason otherwise. */
function probe(): Promise<string | null> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return null;
    } catch (error) {
      return (error as Error).message || String(error);
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return reachable;
}

/** Whether the PostgreSQL tests run: true when reachable; false (with one line) when not; throws under CI=true when not. */
export async function postgresAvailable(what: string): Promise<boolean> {
  const reason = await probe();
  if (reason === null) return true;
  const line = `PostgreSQL is not reachable at ${ADMIN_URL} (${reason}): ${what} skipped`;
  if (process.env.CI === 'true') throw new Error(`${line}; under CI=true they must run`);
  console.warn(line);
  return false;
}

export interface FreshDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A new, empty database on the test server; drop() removes it (closing what is still connected). */
export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `paybatch_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin(async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }),
  };
}
