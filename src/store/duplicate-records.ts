/** The store's records of possible duplicates (engine/duplicates.ts decides on them): the port's, in a file of their own. */
import type { Phase } from '../payout-states.js';

/** A row's first earlier line in its own batch paying the same account, amount and currency. */
export interface SameBatchTwin {
  of_line: number;
  line: number;
  external_id: string | null;
}

/** An earlier row paying the same account the same amount in the same currency (see engine/duplicates.ts). */
export interface Twin {
  batch_id: string;
  line: number;
  external_id: string | null;
  phase: Phase;
  /** The service's state of its transaction; null before it has one. */
  state: string | null;
  /** When it was created at the service, or else when its batch was received (ISO 8601). */
  at: string;
}

/** A person's word that a possible duplicate is meant (paybatch allow). */
export interface Allowance {
  person: string;
  reason: string;
  at: string;
}

/** A row's recipient account (validate/recipient-key.ts), amount and currency: what a possible duplicate is found by. */
export interface RecipientEntry {
  line: number;
  key: string;
  currency: string;
  /** Minor units, an integer string. */
  amount: string;
}

/** A row looked for twins; `batch_id` '' for a file not taken in yet. */
export interface TwinQuery extends RecipientEntry {
  batch_id: string;
}

/** A row found a possible duplicate, with its twin as it stood then; who allowed it, once a person did. */
export interface PossibleDuplicate {
  batch_id: string;
  line: number;
  external_id: string | null;
  /**
   * The twin as found; read back, as recorded: one word of it is kept, its state, or its phase before it had one
   * (then its phase is null: not known).
   */
  twin: Omit<Twin, 'phase'> & { phase: Phase | null };
  /** hold or warn (engine/duplicates.ts). */
  action: string;
  detail: string;
  allowed_by: string | null;
  allowed_reason: string | null;
  allowed_at: string | null;
}
