/**
 * Which errors of node-postgres mean the database went away (DatabaseUnreachable,
 * exit 75: try again) and which are about the query or the database itself
 * (kept as they are: a constraint, a refused login, a missing database).
 */
import { describe, expect, it } from 'vitest';
import { DatabaseUnreachable } from '../../src/errors.js';
import { asUnreachable, connectionLost } from '../../src/store/postgres/connection.js';

const coded = (message: string, code: string): Error => Object.assign(new Error(message), { code });

describe('connectionLost', () => {
  it.each([
    ['a refused connection', coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset socket', coded('read ECONNRESET', 'ECONNRESET')],
    ['the socket ended', new Error('Connection terminated unexpectedly')],
    ['no connection in time', new Error('timeout exceeded when trying to connect')],
    ['a client that lost its connection', new Error('Client has encountered a connection error and is not queryable')],
    ['SQLSTATE class 08', coded('connection failure', '08006')],
    ['the server shutting down', coded('terminating connection due to administrator command', '57P01')],
    ['the server starting up', coded('the database system is starting up', '57P03')],
    ['every address refused', new AggregateError([coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], '')],
  ])('%s: lost', (_what, error) => {
    expect(connectionLost(error)).toBe(true);
    const mapped = asUnreachable(error);
    expect(mapped).toBeInstanceOf(DatabaseUnreachable);
    expect((mapped as DatabaseUnreachable).exitCode).toBe(75);
    expect((mapped as Error).cause).toBe(error);
  });

  it('says what the driver said, or its code when it said nothing (every address refused)', () => {
    expect((asUnreachable(coded('read ECONNRESET', 'ECONNRESET')) as Error).message).toMatch(/^the database cannot be reached \(read ECONNRESET\): nothing is lost/);
    expect((asUnreachable(Object.assign(new AggregateError([coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], ''), { code: 'ECONNREFUSED' })) as Error).message)
      .toMatch(/^the database cannot be reached \(ECONNREFUSED\)/);
  });

  it.each([
    ['a unique violation', coded('duplicate key value violates unique constraint', '23505')],
    ['a refused login', coded('password authentication failed for user "paybatch"', '28P01')],
    ['a missing database', coded('database "payouts" does not exist', '3D000')],
    ['a statement timeout', coded('canceling statement due to statement timeout', '57014')],
    ['any other error', new Error('something else')],
    ['not an error', 'Connection terminated unexpectedly'],
  ])('%s: not lost, kept as it is', (_what, error) => {
    expect(connectionLost(error)).toBe(false);
    expect(asUnreachable(error)).toBe(error);
  });
});
