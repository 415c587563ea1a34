/** What a service operation answers: an HTTP status and a body, before wrapping (D4). */
export interface Reply {
  status: number;
  body?: unknown;
  /** Sent beside the object (e.g. `existing.transaction` for a duplicate, D6). */
  meta?: Record<string, unknown>;
  /** The operation whose "reset after commit" fault may apply to this answer. */
  resettable?: 'create' | 'fund';
}

export const reply = (status: number, body?: unknown, meta?: Record<string, unknown>): Reply => ({ status, body, meta });

/** [D5] 422 with an object of field to messages. */
export const invalid = (errors: Record<string, string[]>, meta?: Record<string, unknown>): Reply =>
  reply(422, { errors }, meta);

/** [D16] Errors outside validation: a list of messages. */
export const failure = (status: number, ...messages: string[]): Reply => reply(status, { errors: messages });
