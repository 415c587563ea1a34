/**
 * An intake a worker died in, on PostgreSQL with workspaces of their own (as
 * on several machines): another worker writes the file back into its own
 * inbox from the bytes kept in the database, whole and marked complete, and
 * takes it in afresh.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { claimName, takeFile } from '../../src/engine/intake.js';
import { recoverInterruptedIntakes } from '../../src/engine/intake-recovery.js';
import { keepFileBytes, keepManifest } from '../../src/engine/file-bytes-in-database.js';
import { SharedWork } from '../../src/engine/shared-work.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

const available = await postgresAvailable('the recovery of an intake a worker died in, on PostgreSQL');
const template = fileURLToPath(new URL('../../fixtures/templates/eur-iban-bank.csv', import.meta.url));

/** What a test works on: a fresh database, a folder, the store, a clock, and workers it joins; all let go however it ends. */
interface Setting {
  store: PostgresStore;
  dir: string;
  clock: ManualClock;
  worker(name: string, unrecordedFileMs?: number): Promise<SharedWork>;
}

async function onFreshDatabase(test: (setting: Setting) => Promise<void>): Promise<void> {
  const database = await freshDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-intake-shared-'));
  const store = await PostgresStore.open(database.url);
  const clock = new ManualClock(Date.parse('2026-11-25T10:00:00.000Z'));
  const workers: SharedWork[] = [];
  const worker = async (name: string, unrecordedFileMs?: number): Promise<SharedWork> => {
    const joined = await SharedWork.join(store, clock, { name, leaseMs: 30_000, serviceConcurrency: 2, ...(unrecordedFileMs === undefined ? {} : { unrecordedFileMs }) });
    workers.push(joined);
    return joined;
  };
  try {
    await test({ store, dir, clock, worker });
  } finally {
    for (const joined of workers) await joined.leave();
    await store.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!available)('an intake a worker died in, on PostgreSQL', () => {
  it('is written back into another worker\'s inbox from the bytes kept, with its marker, and taken in with the marker required', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    const [gone, alive] = [openWorkspace(join(dir, 'gone')), openWorkspace(join(dir, 'alive'))];
    // What worker 'gone' left: the file claimed in its own processing/, the batch begun under its name, the bytes kept.
    const claimed = join(gone.folders.processing, claimName('eur.csv', clock.now()));
    copyFileSync(template, claimed);
    const sha256 = createHash('sha256').update(readFileSync(claimed)).digest('hex');
    const batch = await store.beginBatch({
      file_name: 'eur.csv', sha256, size_bytes: statSync(claimed).size, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(),
      file_mtime_ms: null, send_after: 0, taken_by: 'gone',
    });
    expect(await keepFileBytes(store, batch, claimed)).toBe(sha256);

    const other = await worker('alive');
    expect(await recoverInterruptedIntakes({ workspace: alive, store, shared: other, knownBatches: () => store.batchesInProcessing() })).toEqual([batch]);
    expect(readdirSync(alive.folders.inbox).sort()).toEqual(['eur.csv', 'eur.csv.done']);
    expect(readFileSync(join(alive.folders.inbox, 'eur.csv'))).toEqual(readFileSync(template));

    const config = configSchema.parse({ intake: { marker: 'required' } });
    const outcome = await takeFile(join(alive.folders.inbox, 'eur.csv'), {
      workspace: alive, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock, shared: other,
    });
    expect(outcome).toMatchObject({ kind: 'accepted', ready: 3 });
  }));

  it('a file claimed but never recorded (its claimer killed in between) goes back to the inbox once store.unrecorded_file_ms has passed, not before', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    expect(configSchema.parse({}).store.unrecorded_file_ms).toBe(600_000);
    expect((await worker('default')).unrecordedFileMs).toBe(600_000);
    const home = openWorkspace(join(dir, 'w1'));
    const claim = claimName('eur.csv', clock.now());
    copyFileSync(template, join(home.folders.processing, claim));
    writeFileSync(join(home.folders.processing, `${claim}.done`), '');
    // Its worker, started again: the folder may be shared, so the claim may be another live worker's still hashing it.
    const me = await worker('w1', 60_000);
    const recover = () => recoverInterruptedIntakes({ workspace: home, store, shared: me, atStart: false, knownBatches: () => store.batchesInProcessing() });
    clock.advance(59_000);
    expect(await recover()).toEqual([]);
    expect(readdirSync(home.folders.inbox)).toEqual([]);
    clock.advance(2_000);
    expect(await recover()).toEqual([claim]);
    expect(readdirSync(home.folders.inbox).sort()).toEqual(['eur.csv', 'eur.csv.done']);
    expect(readFileSync(join(home.folders.inbox, 'eur.csv'))).toEqual(readFileSync(template));
  }));

  it('keeps the manifest a file came with, and writes it back with the file: taken in again with a manifest required', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    const config = configSchema.parse({ intake: { marker: 'required', manifest: 'required' } });
    const sha256 = createHash('sha256').update(readFileSync(template)).digest('hex');
    const manifest = JSON.stringify({ rows: 3, sha256 });

    // Taken in by a worker: its manifest is kept beside its bytes.
    const first = openWorkspace(join(dir, 'first'));
    const taker = await worker('first');
    const gbr = fileURLToPath(new URL('../../fixtures/templates/gbr-bank.csv', import.meta.url));
    const gbrManifest = JSON.stringify({ rows: 2, sha256: createHash('sha256').update(readFileSync(gbr)).digest('hex') });
    copyFileSync(gbr, join(first.folders.inbox, 'gbr.csv'));
    writeFileSync(join(first.folders.inbox, 'gbr.csv.manifest.json'), gbrManifest);
    writeFileSync(join(first.folders.inbox, 'gbr.csv.done'), '');
    const taken = await takeFile(join(first.folders.inbox, 'gbr.csv'), { workspace: first, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock, shared: taker });
    expect(taken).toMatchObject({ kind: 'accepted', ready: 2 });
    expect(await store.keptManifest((taken as { batch: string }).batch)).toBe(gbrManifest);

    // What worker 'gone' left of another file: claimed, begun under its name, its bytes and its manifest kept.
    const gone = openWorkspace(join(dir, 'gone'));
    const claimed = join(gone.folders.processing, claimName('eur.csv', clock.now()));
    copyFileSync(template, claimed);
    writeFileSync(`${claimed}.manifest.json`, manifest);
    const batch = await store.beginBatch({
      file_name: 'eur.csv', sha256, size_bytes: statSync(claimed).size, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(),
      file_mtime_ms: null, send_after: 0, taken_by: 'gone',
    });
    expect(await keepFileBytes(store, batch, claimed)).toBe(sha256);
    await keepManifest(store, batch, `${claimed}.manifest.json`);

    const alive = openWorkspace(join(dir, 'alive'));
    const other = await worker('alive');
    expect(await recoverInterruptedIntakes({ workspace: alive, store, shared: other, knownBatches: () => store.batchesInProcessing() })).toEqual([batch]);
    expect(readdirSync(alive.folders.inbox).sort()).toEqual(['eur.csv', 'eur.csv.done', 'eur.csv.manifest.json']);
    expect(readFileSync(join(alive.folders.inbox, 'eur.csv.manifest.json'), 'utf8')).toBe(manifest);
    const outcome = await takeFile(join(alive.folders.inbox, 'eur.csv'), {
      workspace: alive, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock, shared: other,
    });
    expect(outcome).toMatchObject({ kind: 'accepted', ready: 3 });
  }));

  it('keeps only a manifest that reads as one: a NUL in it is the file\'s refusal, not a database error that left the intake hanging', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    const config = configSchema.parse({ intake: { marker: 'required', manifest: 'required' } });
    const workspace = openWorkspace(join(dir, 'w'));
    copyFileSync(template, join(workspace.folders.inbox, 'eur.csv'));
    writeFileSync(join(workspace.folders.inbox, 'eur.csv.manifest.json'), '{"rows": 3}\0');
    writeFileSync(join(workspace.folders.inbox, 'eur.csv.done'), '');
    const outcome = await takeFile(join(workspace.folders.inbox, 'eur.csv'), { workspace, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock, shared: await worker('w') });
    expect(outcome).toMatchObject({ kind: 'not_read', reason: expect.stringMatching(/manifest cannot be read: it is not valid JSON/) });
    const [batch] = await store.recentBatches('2026-01-01T00:00:00.000Z');
    expect(batch?.file_name).toBe('eur.csv');
    expect(await store.keptManifest(batch?.id as string)).toBeNull();
    expect(readdirSync(workspace.folders.failed)).toContainEqual(expect.stringMatching(/eur\.csv$/));
  }));
});
