/**
 * When a batch under approvals was released, sealed: an HMAC-SHA256, by a key
 * derived from the payout service's API secret (which lives in the
 * configuration or a mounted secret, never in the database), over the
 * deployment, the batch, what was approved and the time of release. A restart
 * past the approval's expiry resumes a batch released in time by this seal;
 * `released = 1` set by hand has none, so the approval is checked against the
 * time now, and an expired one releases nothing. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface Sealed {
  deployment: string;
  batch: string;
  rows_sha256: string;
  expires_at: string;
}

const macOf = (key: Buffer, what: Sealed, at: string): string =>
  createHmac('sha256', key).update(`paybatch release v1\n${what.deployment}\n${what.batch}\n${what.rows_sha256}\n${what.expires_at}\n${at}`).digest('hex');

export function sealRelease(key: Buffer, what: Sealed, atMs: number): { at: string; seal: string } {
  const at = new Date(atMs).toISOString();
  return { at, seal: macOf(key, what, at) };
}

/** The time of release (ms) the seal proves for `what`, or null when there is none or it is not this key's. */
export function sealedReleaseTime(key: Buffer | undefined, what: Sealed, stored: { released_at?: string | null; release_seal?: string | null }): number | null {
  if (!key || !stored.released_at || !stored.release_seal) return null;
  const expected = Buffer.from(macOf(key, what, stored.released_at), 'utf8');
  const given = Buffer.from(stored.release_seal, 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  const at = Date.parse(stored.released_at);
  return Number.isFinite(at) ? at : null;
}
