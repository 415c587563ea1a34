/** [3.1], [3.3], [6] The states the interface names, and the event types they make. */

export const TRANSACTION_STATES = [
  'initial', 'verified', 'approved', 'pending', 'mispaid', 'received', 'processing',
  'manual', 'paid', 'canceled', 'refunded', 'exception', 'error', 'stuck',
] as const;

export const SENDER_STATES = ['initial', 'verified', 'approved', 'banned', 'rejected', 'disabled'] as const;

/** Every event type paybatch listens for: one webhook each [6]. */
export const EVENT_TYPES: readonly string[] = [
  ...TRANSACTION_STATES.map((state) => `transaction.${state}`),
  'transaction.paid_out',
  ...SENDER_STATES.map((state) => `sender.${state}`),
];
