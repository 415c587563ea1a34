/**
 * Which statements PostgreSQL is asked to prepare once per connection and
 * reuse (a named statement): a statement sent unnamed is parsed and planned
 * again on every call, some two fifths of the server's CPU for a row sent by
 * a worker (docs/performance.md). Named only where reuse is safe and bounded:
 *
 * - at most MAX_PARAMETERS parameters: a statement built for a list of
 *   values (`VALUES (?, ?), (?, ?)...`, `IN (?, ?, ...)`) has a text per
 *   length, each of which would stay prepared on every connection;
 * - no `*` (COUNT(*) aside): a prepared `SELECT *` fails once a column is
 *   added to its table ("cached plan must not change result type"), which a
 *   newer worker's migration may do while this one runs;
 * - one statement (no `;`): the protocol prepares one at a time.
 */
import { createHash } from 'node:crypto';

const MAX_PARAMETERS = 32;
/** Texts remembered with their name; beyond this, a text is judged again on every call (only dynamic texts get there). */
const REMEMBERED = 4_000;

export interface Statement {
  /** With `$1`, `$2`... placeholders. */
  text: string;
  /** The name it is prepared under, the same for the same text in every process; null: sent unnamed. */
  name: string | null;
}

const remembered = new Map<string, string | null>();

function nameOf(text: string): string | null {
  const parameters = new Set(text.match(/\$\d+/g)).size;
  const star = text.replace(/COUNT\(\*\)/gi, '').includes('*');
  if (parameters > MAX_PARAMETERS || star || text.includes(';')) return null;
  return `pb_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}

/** `text` (numbered) as it is sent: named when `prepare` and reuse is safe (above). */
export function statementOf(text: string, prepare: boolean): Statement {
  if (!prepare) return { text, name: null };
  let name = remembered.get(text);
  if (name === undefined) {
    name = nameOf(text);
    if (remembered.size < REMEMBERED) remembered.set(text, name);
  }
  return { text, name };
}
