/**
 * The database going away (the server restarted, the network cut): what
 * node-postgres raises then is told apart from every other error and becomes
 * DatabaseUnreachable (exit 75). The step it failed is left as stored and taken
 * up again, by this worker while its lease holds, or by the next one.
 *
 * A connection taken from the pool has an error listener for as long as it is
 * out: when its socket dies node-postgres emits 'error' on the client itself
 * (the pool listens only to its idle ones), and an 'error' nobody listens to
 * ends the process with a stack trace.
 */
import type pg from 'pg';
import { DatabaseUnreachable } from '../../errors.js';
import { preparedStatementGone } from './prepared.js';

/** Socket errors: the server is down, restarting, or out of reach. */
const SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);

/** SQLSTATE class 08 (connection exception), and the server shutting down or starting up (57P01 to 57P03). */
const SHUTDOWN_STATES: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03']);

/** What node-postgres says, with no code, when a connection ends or cannot be made in time. */
const LOST_MESSAGES: readonly RegExp[] = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /is not queryable$/,
];

/** Whether `error` says the connection to the database was lost or could not be made (not what a query did wrong). */
export function connectionLost(error: unknown): boolean {
  if (error instanceof DatabaseUnreachable) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SHUTDOWN_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  // Node's connect to a name with several addresses fails with every address's error.
  if (error instanceof AggregateError && error.errors.some(connectionLost)) return true;
  return LOST_MESSAGES.some((message) => message.test(error.message));
}

/** What the driver said of a lost connection, in a few words (Node's error for every address refused has no message). */
export function lostDetail(error: unknown): string {
  const lost = error instanceof DatabaseUnreachable && error.cause !== undefined ? error.cause : error;
  return (lost as Error).message || (lost as { code?: string }).code || 'no answer';
}

/** `error` as DatabaseUnreachable when the connection was lost; anything else as it was. */
export function asUnreachable(error: unknown): unknown {
  if (error instanceof DatabaseUnreachable || !connectionLost(error)) return error;
  return new DatabaseUnreachable(`the database cannot be reached (${lostDetail(error)}): nothing is lost, what was under way is taken up again from what is stored`, { cause: error });
}

/**
 * Runs `work` on one connection of the pool, listening for its 'error' while
 * it is out. A connection that failed, or whose prepared statement went stale
 * (prepared.ts), is closed, never given back for reuse.
 */
export async function withConnection<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw asUnreachable(error);
  }
  let broken: Error | undefined;
  // The query under way fails with the same error: it is thrown from there.
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } catch (error) {
    if (connectionLost(error) || preparedStatementGone(error)) broken ??= error as Error;
    throw asUnreachable(error);
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
