/** Taking the workspace lease in PostgreSQL: one holder, decided under an advisory lock (workers sharing the work use worker leases instead). */
import type { LeaseHolder } from '../port.js';
import { LEASE_SQL, leaseKept, leaseValues } from '../queries/coordination.js';
import type { PgConnection } from './client.js';

const LEASE_LOCK = 7_281_921;

export async function acquireLease(c: PgConnection, me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): Promise<LeaseHolder | null> {
  return c.tx(async (tx) => {
    await tx.lockForTransaction(LEASE_LOCK);
    const held = await tx.first<LeaseHolder>(LEASE_SQL.held);
    if (leaseKept(held, me, isAlive, staleAfterMs)) return held;
    await tx.run(LEASE_SQL.take, leaseValues(me));
    return null;
  });
}
