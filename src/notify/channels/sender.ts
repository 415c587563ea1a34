/** What every channel's sender is, and the one error it throws. */
import type { Outgoing } from '../render.js';

/** A failed attempt; its message is safe to keep and log (no secret, no chat URL). */
export class DeliveryFailed extends Error {}

export interface Sender {
  /** Sends one notification; resolves once the receiver took it, throws DeliveryFailed otherwise. Ends early when `stop` fires. */
  send(notification: Outgoing, stop: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * A message with every secret it might quote (a password, a signing secret, a
 * chat URL's token) replaced: error text from libraries is not ours to trust.
 */
export function scrub(message: string, secrets: readonly string[]): string {
  let clean = message;
  for (const secret of secrets) if (secret.length >= 4) clean = clean.split(secret).join('[secret]');
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}
