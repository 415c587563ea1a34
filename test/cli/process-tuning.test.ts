/** The CLI's process-wide settings, set once at start (src/cli/process-tuning.ts). */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keepSqliteTemporaryFilesBeside } from '../../src/cli/process-tuning.js';
import { configSchema } from '../../src/config/config.js';
import type { StoreConfig } from '../../src/config/config.js';
import { MEASURED_HEAP } from '../../src/heap.js';
import type { Workspace } from '../../src/workspace/workspace.js';

const workspace = { home: '/data/pb', database: '/data/pb/paybatch.db' } as Workspace;
const sqlite = {} as StoreConfig;

describe('SQLite\'s temporary folder', () => {
  it('is the database\'s folder with SQLite, a folder the user set kept, and untouched with PostgreSQL', () => {
    const env: NodeJS.ProcessEnv = {};
    keepSqliteTemporaryFilesBeside(sqlite, workspace, env);
    expect(env.SQLITE_TMPDIR).toBe('/data/pb');
    const own: NodeJS.ProcessEnv = { SQLITE_TMPDIR: '/fast' };
    keepSqliteTemporaryFilesBeside(sqlite, workspace, own);
    expect(own.SQLITE_TMPDIR).toBe('/fast');
    const postgres: NodeJS.ProcessEnv = {};
    keepSqliteTemporaryFilesBeside({ url: 'postgres://127.0.0.1/test' } as StoreConfig, workspace, postgres);
    expect(postgres.SQLITE_TMPDIR).toBeUndefined();
  });
});

describe('every command that opens the store', () => {
  it('sets SQLite\'s temporary folder first, the CLI\'s way (the store no longer does)', () => {
    const cli = new URL('../../src/cli/', import.meta.url);
    const opening = readdirSync(cli).filter((name) => name.endsWith('.ts'))
      .map((name) => ({ name, text: readFileSync(new URL(name, cli), 'utf8') }))
      .filter(({ text }) => /SqliteStore\.open\(|openStore\(/.test(text));
    expect(opening.map(({ name }) => name)).toEqual(expect.arrayContaining(['backup-command.ts', 'demo-command.ts', 'engine-session.ts', 'read-store.ts', 'validate-command.ts']));
    for (const { name, text } of opening) {
      const open = text.search(/SqliteStore\.open\(|openStore\(/);
      const set = text.search(/keepSqliteTemporaryFilesBeside\(|tuneProcess\(/);
      expect({ name, set: set >= 0 && set < open }).toEqual({ name, set: true });
    }
  });
});

describe('the heap\'s settings', () => {
  it('are the configuration\'s process keys, whose defaults are the figures held at start before the configuration is read', () => {
    expect(configSchema.parse({}).process).toEqual(MEASURED_HEAP);
  });

  it('are set by every command that loads its configuration and works (read-store and engine-session for the rest)', () => {
    const cli = new URL('../../src/cli/', import.meta.url);
    for (const name of ['backup-command.ts', 'demo-command.ts', 'engine-session.ts', 'read-store.ts', 'validate-command.ts']) {
      const text = readFileSync(new URL(name, cli), 'utf8');
      expect({ name, tuned: /tuneProcess\(|tuneHeap\(/.test(text) }).toEqual({ name, tuned: true });
    }
    // main.ts holds the heap as the defaults say until then, and takes no heap flag from its arguments.
    const main = readFileSync(new URL('main.ts', cli), 'utf8');
    expect(main).toContain('holdHeapUntilConfigured()');
    expect(main).not.toMatch(/setFlagsFromString|--max-semi|--heap-/);
  });
});
