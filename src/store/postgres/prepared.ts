/**
 * Which statements PostgreSQL is asked to prepare once per connection and
 * reuse (a named statement): a statement sent unnamed is parsed again on
 * every call (docs/performance.md, "Statements prepared once per
 * connection"). Named only where reuse is safe and bounded:
 *
 * - at most MAX_PARAMETERS parameters: a statement built for a list of
 *   values (`VALUES (?, ?), (?, ?)...`, `IN (?, ?, ...)`) has a text per
 *   length, each of which would stay prepared on every connection;
 * - no `*` (COUNT(*) aside): a prepared `SELECT *` fails once a column is
 *   added to its table ("cached plan must not change result type"), which a
 *   newer worker's migration may do while this one runs;
 * - one statement (no `;`): the protocol prepares one at a time.
 *
 * A statement prepared is still planned for its values on every call
 * (plan_cache_mode, set by postgres-store.ts): a generic plan, which the server
 * would otherwise switch to after five calls, walked every earlier payment of
 * the same account in the possible-duplicate screen. And a connection whose
 * prepared statement went stale (preparedStatementGone) is closed, not reused.
 */
import { createHash } from 'node:crypto';
import { numbered } from '../queries/connection.js';

const MAX_PARAMETERS = 32;
/** Texts remembered with their statement; beyond this, a text is judged again on every call (only dynamic texts get there). */
const REMEMBERED = 4_000;

export interface Statement {
  /** With `$1`, `$2`... placeholders. */
  text: string;
  /** The name it is prepared under, the same for the same text in every process; null: sent unnamed. */
  name: string | null;
}

/** Statements by the text they are written in: numbered and judged once (a call finds its statement in one look-up). */
const remembered = new Map<string, Statement>();

function nameOf(text: string): string | null {
  const parameters = new Set(text.match(/\$\d+/g)).size;
  const star = text.replace(/COUNT\(\*\)/gi, '').includes('*');
  if (parameters > MAX_PARAMETERS || star || text.includes(';')) return null;
  return `pb_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}

/** `text` (with `?` placeholders, or already numbered) as it is sent: numbered, and named when `prepare` and reuse is safe (above). */
export function statementOf(text: string, prepare: boolean): Statement {
  if (!prepare) return { text: numbered(text), name: null };
  let statement = remembered.get(text);
  if (statement === undefined) {
    const sent = numbered(text);
    statement = { text: sent, name: nameOf(sent) };
    if (remembered.size < REMEMBERED) remembered.set(text, statement);
  }
  return statement;
}

/**
 * The server refused a prepared statement itself: stale, since another process changed the type of a column it returns
 * (0A000, "cached plan must not change result type"), or gone (26000). Every later call of it on that connection would
 * fail the same way: the connection is closed (connection.ts), and the next one prepares the statement afresh.
 */
export function preparedStatementGone(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '26000' || (code === '0A000' && typeof message === 'string' && message.includes('cached plan'));
}
