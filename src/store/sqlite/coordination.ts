/** Taking the workspace lease in SQLite: one transaction that reads the holder and writes the new one. */
import type { LeaseHolder } from '../port.js';
import { LEASE_SQL, leaseKept, leaseValues } from '../queries/coordination.js';
import type { SqliteConnection } from './connection.js';

export async function acquireLease(c: SqliteConnection, me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): Promise<LeaseHolder | null> {
  return c.atomic(() => {
    const held = c.sql(LEASE_SQL.held).get() as LeaseHolder | undefined;
    if (leaseKept(held, me, isAlive, staleAfterMs)) return held;
    c.sql(LEASE_SQL.take).run(...leaseValues(me));
    return null;
  });
}
