/**
 * Before anything of a batch is sent, its file is looked at once more: taken as
 * complete by stability alone, it must still be the file validated after as long
 * again; a file that changed is taken back, nothing of it sent, and put back in
 * the inbox. A file complete by its marker is looked at again too, after a
 * shorter while. On a manual clock, with a real file and a real store.
 */
import { appendFileSync, copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { IntakeDeps } from '../../src/engine/intake.js';
import { MARKED_SECOND_LOOK_MS, takeWhenComplete } from '../../src/engine/intake.js';
import { releaseBatch } from '../../src/engine/release.js';
import type { BatchRecord } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { template } from '../helpers/engine.js';

describe('releasing a batch to be sent', () => {
  let dir: string;
  let workspace: Workspace;
  let store: SqliteStore;
  let deps: IntakeDeps;
  const clock = new ManualClock('2026-11-23T10:00:00.000Z');
  const config = configSchema.parse({ intake: { stable_ms: 10_000 } });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-release-'));
    workspace = openWorkspace(join(dir, 'ws'));
    store = SqliteStore.open(workspace.database);
    deps = { workspace, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock };
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const take = async (name: string) => {
    const outcome = await takeWhenComplete(join(workspace.folders.inbox, name), deps, async (ms) => clock.advance(ms), clock.now() + 60_000);
    if (outcome.kind !== 'accepted') throw new Error(`not accepted: ${outcome.kind}`);
    return (await store.batch(outcome.batch)) as BatchRecord;
  };

  it('waits as long again once a file complete by stability is taken, then releases it unchanged', async () => {
    copyFileSync(template('templates/gbr-bank.csv'), join(workspace.folders.inbox, 'gbr.csv'));
    const batch = await take('gbr.csv');
    expect(batch.released).toBe(0);
    expect(await store.batchReleased(batch.id)).toBe(false);
    expect(await releaseBatch(batch, { ...deps, store })).toEqual({ kind: 'wait', untilMs: batch.send_after });
    clock.advance(10_000);
    expect(await releaseBatch(batch, { ...deps, store })).toEqual({ kind: 'released' });
    expect(await store.batchReleased(batch.id)).toBe(true);
  });

  it('takes back a batch whose file changed after it was taken in: nothing sendable, the file back in the inbox', async () => {
    copyFileSync(template('templates/gbr-bank.csv'), join(workspace.folders.inbox, 'gbr.csv'));
    const batch = await take('gbr.csv');
    // The writer had only paused: it goes on writing into the file it opened, now in processing/.
    const [claimed] = readdirSync(workspace.folders.processing);
    appendFileSync(join(workspace.folders.processing, claimed as string), 'GBR-2026-0003,bank,USD,GBP,5.00\n');
    clock.advance(10_000);
    const release = await releaseBatch(batch, { ...deps, store });
    expect(release).toMatchObject({ kind: 'withdrawn' });
    expect((await store.batch(batch.id))?.status).toBe('rejected');
    const rows = [];
    for await (const row of store.rows(batch.id)) rows.push([row.phase, row.outcome]);
    expect(rows).toEqual([['not_sent', 'file_changed'], ['not_sent', 'file_changed']]);
    expect(readdirSync(workspace.folders.inbox)).toEqual(['gbr.csv']);
    expect(readdirSync(workspace.folders.processing)).toEqual([]);
  });

  it('looks again at a file complete by its marker too, after a shorter while: released unchanged', async () => {
    copyFileSync(template('templates/gbr-bank.csv'), join(workspace.folders.inbox, 'gbr.csv'));
    writeFileSync(join(workspace.folders.inbox, 'gbr.csv.done'), '');
    const batch = await take('gbr.csv');
    expect(batch.send_after).toBe(Date.parse(batch.received_at) + MARKED_SECOND_LOOK_MS);
    expect(await releaseBatch(batch, { ...deps, store })).toEqual({ kind: 'wait', untilMs: batch.send_after });
    clock.advance(MARKED_SECOND_LOOK_MS);
    expect(await releaseBatch(batch, { ...deps, store })).toEqual({ kind: 'released' });
    expect(readdirSync(workspace.folders.processing).sort()).toEqual([expect.stringMatching(/--gbr\.csv$/), expect.stringMatching(/--gbr\.csv\.done$/)]);
  });

  it('takes back a file complete by its marker that was written to after it: nothing sendable', async () => {
    copyFileSync(template('templates/gbr-bank.csv'), join(workspace.folders.inbox, 'gbr.csv'));
    writeFileSync(join(workspace.folders.inbox, 'gbr.csv.done'), '');
    const batch = await take('gbr.csv');
    const [claimed] = readdirSync(workspace.folders.processing).filter((f) => f.endsWith('gbr.csv'));
    appendFileSync(join(workspace.folders.processing, claimed as string), 'GBR-2026-0003,bank,USD,GBP,5.00\n');
    clock.advance(MARKED_SECOND_LOOK_MS);
    expect(await releaseBatch(batch, { ...deps, store })).toMatchObject({ kind: 'withdrawn' });
    expect((await store.batch(batch.id))?.status).toBe('rejected');
    expect(readdirSync(workspace.folders.inbox).sort()).toEqual(['gbr.csv', 'gbr.csv.done']);
  });
});
