/**
 * The PostgreSQL store when the database goes away, through a TCP proxy the
 * test cuts and restores (the server itself keeps running): a connection lost
 * while a transaction holds it fails that call with DatabaseUnreachable (exit
 * 75), never the process; the next call, once the database is back,
 * reconnects; a database out of reach at the start is a try-again (75), not a
 * database that cannot be used (65).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { DatabaseUnreachable, ExitCode } from '../../src/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { WorkerRecord } from '../../src/store/port.js';
import { eventually } from '../helpers/daemon.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import type { FreshDatabase } from '../helpers/postgres.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';
import { addressOf, proxiedUrl, tcpProxy } from '../helpers/tcp-proxy.js';

const available = await postgresAvailable('the tests of the PostgreSQL store losing its connection');
/**
 * Sessions of the database waiting on a lock, whose statement is LIKE `statement`. The asking session is inside the
 * transaction that holds the lock, and PostgreSQL keeps the first view of pg_stat_activity for a whole transaction:
 * the view is cleared before each look, or a statement that starts to wait after the first look is never seen.
 */
async function waitingOnLock(session: pg.Client, name: string, statement: string): Promise<number> {
  await session.query('SELECT pg_stat_clear_snapshot()');
  const found = await session.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE $2", [name, statement]);
  return found.rows.length;
}
const worker = (name: string, at: number): WorkerRecord => ({ name, token: `${name}-token`, host: 'h', pid: 1, started_at: at, renewed_at: at, expires_at: at + 30_000 });

describe.skipIf(!available)('PostgreSQL: the database going away', () => {
  let database: FreshDatabase;
  let proxy: TcpProxy;
  let direct: pg.Client;
  let store: PostgresStore | undefined;

  beforeEach(async () => {
    database = await freshDatabase();
    proxy = await tcpProxy(addressOf(database.url));
    direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
  });
  afterEach(async () => {
    await store?.close().catch(() => {});
    store = undefined;
    await direct.end();
    await proxy.close();
    await database.drop();
  });

  it('a connection cut while a transaction holds it fails that call (exit 75), not the process; the next call after restore reconnects', async () => {
    store = await PostgresStore.open(proxiedUrl(database.url, proxy));
    // Another session holds the workers table: the join's transaction waits inside, on its checked-out connection.
    await direct.query('BEGIN');
    await direct.query('LOCK TABLE workers IN ACCESS EXCLUSIVE MODE');
    const joining = store.joinWorkers(worker('a', 1_000), () => true).then(() => null, (error: unknown) => error);
    await eventually(async () => (await waitingOnLock(direct, database.name, '%')) === 1, 15_000, 'the join waiting on the lock');
    proxy.cut();
    const failed = await joining;
    expect(failed).toBeInstanceOf(DatabaseUnreachable);
    expect((failed as DatabaseUnreachable).exitCode).toBe(ExitCode.tempFail);
    expect((failed as Error).message).toMatch(/^the database cannot be reached \(.+\): nothing is lost/);
    await direct.query('ROLLBACK');
    // While cut, every call fails the same way, one with a transaction and one without.
    await expect(store.workers()).rejects.toBeInstanceOf(DatabaseUnreachable);
    await expect(store.leaveWorkers('a', 'a-token')).rejects.toBeInstanceOf(DatabaseUnreachable);
    proxy.restore();
    // The cut transaction was rolled back by the server; the same store works again.
    expect(await store.workers()).toEqual([]);
    expect(await store.joinWorkers(worker('a', 2_000), () => true)).toBeNull();
    expect((await store.workers()).map((w) => w.name)).toEqual(['a']);
  });

  it('a connection cut while a COPY of rows waits fails that page (exit 75), stores none of it; the page goes in whole once restored', async () => {
    store = await PostgresStore.open(proxiedUrl(database.url, proxy));
    const batch = await store.beginBatch({ file_name: 'cut.csv', sha256: 'c'.repeat(64), size_bytes: 1, policy: 'skip_invalid', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0 });
    const page = Array.from({ length: 250 }, (_, i) => ({ line: i + 1, external_id: `C${i}`, request: null, errors: [{ line: i + 1, column: 'type', code: 'required', message: 'm' }] }));
    // Another session holds the rows table: the COPY waits inside its transaction, on its checked-out connection.
    await direct.query('BEGIN');
    await direct.query('LOCK TABLE rows IN ACCESS EXCLUSIVE MODE');
    const adding = store.addRows(batch, page).then(() => null, (error: unknown) => error);
    await eventually(async () => (await waitingOnLock(direct, database.name, 'COPY rows%')) === 1, 15_000, 'the COPY waiting on the lock');
    proxy.cut();
    expect(await adding).toBeInstanceOf(DatabaseUnreachable);
    await direct.query('ROLLBACK');
    proxy.restore();
    expect((await direct.query('SELECT COUNT(*)::int AS n FROM rows')).rows[0]).toEqual({ n: 0 });
    expect((await direct.query('SELECT rows_total FROM batches')).rows[0]).toEqual({ rows_total: 0 });
    await store.addRows(batch, page);
    expect((await direct.query('SELECT COUNT(*)::int AS n FROM rows')).rows[0]).toEqual({ n: 250 });
    expect((await direct.query('SELECT rows_total FROM batches')).rows[0]).toEqual({ rows_total: 250 });
  });

  it('a database out of reach at the start: DatabaseUnreachable (75) naming it without its password, not DatabaseUnusable (65)', async () => {
    proxy.cut();
    const url = new URL(proxiedUrl(database.url, proxy));
    url.password = 'hunter2';
    const failed = await PostgresStore.open(url.toString()).then(() => null, (error: unknown) => error);
    expect(failed).toBeInstanceOf(DatabaseUnreachable);
    expect((failed as DatabaseUnreachable).exitCode).toBe(ExitCode.tempFail);
    expect((failed as Error).message).toMatch(/^PostgreSQL at .+ cannot be reached \(.+\): nothing was changed; run again once it answers$/);
    expect((failed as Error).message).not.toContain('hunter2');
  });
});
