/** [3.1], [3.3], [6] The states the interface names, and the event types they make. */

import { TX_STATES } from '../payout-states.js';

/** The service's transaction states, written once in payout-states.ts. */
export const TRANSACTION_STATES = TX_STATES;

export const SENDER_STATES = ['initial', 'verified', 'approved', 'banned', 'rejected', 'disabled'] as const;

/** Every event type paybatch listens for: one webhook each [6]. */
export const EVENT_TYPES: readonly string[] = [
  ...TRANSACTION_STATES.map((state) => `transaction.${state}`),
  'transaction.paid_out',
  ...SENDER_STATES.map((state) => `sender.${state}`),
];
