/**
 * The client's calls as /metrics counts them: each endpoint as its route
 * template (never an id or an account, so that it can be a label), and how each
 * HTTP request ended, by what the caller can act on.
 */

/** The endpoints of [4] and [D7]. */
export type Endpoint =
  | 'GET /corridors/:country' | 'POST /transactions' | 'GET /transactions' | 'GET /transactions/:id' | 'POST /transactions/:id/fund'
  | 'DELETE /transactions/:id' | 'POST /webhooks' | 'GET /webhooks' | 'DELETE /webhooks/:id';

/** How one HTTP request ended, by what the caller can act on. */
export type CallOutcome = 'ok' | 'unreadable' | 'rejected' | 'auth_refused' | 'rate_limited' | 'redirect' | 'server_error' | 'no_answer';

export type CallObserver = (endpoint: Endpoint, outcome: CallOutcome, seconds: number) => void;

export function callOutcome(answer: { status: number; readable: boolean } | null): CallOutcome {
  if (answer === null) return 'no_answer';
  const { status } = answer;
  if (status >= 200 && status < 300) return answer.readable ? 'ok' : 'unreadable';
  if (status === 401 || status === 403) return 'auth_refused';
  if (status === 429) return 'rate_limited';
  if (status >= 300 && status < 400) return 'redirect';
  // A refusal is counted as one the service explained only when its words could be read.
  if (status >= 400 && status < 500) return answer.readable ? 'rejected' : 'unreadable';
  return 'server_error';
}
