/**
 * The engine session lets go of what it holds however it ends: a close that
 * fails after the work failed neither hides the work's error (its exit code
 * and line are what is told) nor keeps the later closes from running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PaybatchError } from '../../src/errors.js';

// A service connection whose close fails: the only part of the session replaced here.
vi.mock('../../src/cli/service-connection.js', () => ({
  connectService: async () => ({
    client: {}, credentials: { apiKey: 'k', apiSecret: 's' }, embedded: null, describe: 'a service whose connection fails to close',
    close: async () => {
      throw new Error('the connection would not close');
    },
  }),
}));

const { withEngineSession } = await import('../../src/cli/engine-session.js');

let home = '';
let said: string[] = [];
let stderr: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'paybatch-session-'));
  said = [];
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(((text: string) => {
    said.push(String(text));
    return true;
  }) as never);
});
afterEach(() => {
  stderr.mockRestore();
  rmSync(home, { recursive: true, force: true });
});

const leaseHolders = (): unknown[] => {
  const db = new Database(join(home, 'paybatch.db'));
  try {
    return db.prepare('SELECT pid FROM workspace_lease').all();
  } finally {
    db.close();
  }
};

describe('the engine session, ending', () => {
  it('tells the work\'s own failure when a close fails after it, warns of the close, and still releases the lease', async () => {
    const refused = new PaybatchError('the service refused our credentials', 77);
    const ended = await withEngineSession({ home }, async () => {
      throw refused;
    }).catch((error: unknown) => error);
    expect(ended).toBe(refused);
    expect(said.join('')).toMatch(/paybatch: warning: the connection would not close/);
    expect(leaseHolders()).toEqual([]);
  });

  it('fails with the close\'s error when the work itself went well (nothing else to tell)', async () => {
    const ended = await withEngineSession({ home }, async () => 'done').catch((error: unknown) => error);
    expect(ended).toMatchObject({ message: 'the connection would not close' });
    expect(leaseHolders()).toEqual([]);
  });
});
