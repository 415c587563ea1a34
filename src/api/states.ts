/** [3.1], [3.3], [6] The states the interface names, and the event types they make. */

import { SENDER_STATES, TX_STATES } from '../payout-states.js';

/** The service's transaction and sender states, written once in payout-states.ts. */
export const TRANSACTION_STATES = TX_STATES;
export { SENDER_STATES };

/** Every event type paybatch listens for: one webhook each [6]. */
export const EVENT_TYPES: readonly string[] = [
  ...TRANSACTION_STATES.map((state) => `transaction.${state}`),
  'transaction.paid_out',
  ...SENDER_STATES.map((state) => `sender.${state}`),
];
