/**
 * One `run` or `watch` at a time in a workspace: a lease held in the state
 * database for the life of the process and renewed every few seconds. A lock
 * file could be emptied or deleted under a running daemon; the lease cannot:
 * taking it is one transaction, and it is taken over only from a holder that is
 * gone (its process dead on this host) or silent (not renewed for a minute). A
 * holder that finds its lease taken stops.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import { ExitCode, PaybatchError } from '../errors.js';
import type { LeaseHolder, LeaseStore } from '../store/port.js';

export const RENEW_EVERY_MS = 5_000;
/** A lease not renewed for this long belongs to a process that hangs or is gone, on whatever host. */
export const STALE_AFTER_MS = 60_000;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface HeldWorkspace {
  /** Resolves if the lease is lost (taken over, or the database replaced): the holder must stop. */
  lost: Promise<string>;
  release(): Promise<void>;
}

export async function holdWorkspace(store: LeaseStore, what: string, home: string, clock: Clock): Promise<HeldWorkspace> {
  const host = hostname();
  const now = clock.now();
  const me: LeaseHolder = { token: randomUUID(), holder: what, pid: process.pid, host, acquired_at: now, renewed_at: now };
  const isAlive = (holder: LeaseHolder): boolean => holder.host !== host || processAlive(holder.pid);
  const other = await store.acquireLease(me, isAlive, STALE_AFTER_MS);
  if (other) {
    const where = other.host === host ? `process ${other.pid}` : `process ${other.pid} on ${other.host}`;
    throw new PaybatchError(`another paybatch (${other.holder}, ${where}, since ${new Date(other.acquired_at).toISOString()}) is working in ${home}; wait for it to finish, or stop it`, ExitCode.failure);
  }
  let onLost: (why: string) => void = () => {};
  const lost = new Promise<string>((resolve) => (onLost = resolve));
  const timer = setInterval(() => {
    store.renewLease(me.token, clock.now()).then(
      (held) => { if (!held) onLost('another paybatch took the workspace over'); },
      (error: unknown) => onLost(`the lease could not be renewed: ${(error as Error).message}`),
    );
  }, RENEW_EVERY_MS);
  timer.unref();
  return {
    lost,
    async release() {
      clearInterval(timer);
      await store.releaseLease(me.token).catch(() => {});
    },
  };
}
