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
import { setAsideEndedFile } from '../../src/engine/ended-at-release.js';
import type { BatchRecord } from '../../src/store/port.js';
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

  it('a copy its worker had claimed, when another worker recovered the intake and took the file in again: archived with a note naming the batch that pays it, not put back; a settled batch\'s file archived', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    // As a chaos run left it: 'gone' claimed eur.csv and began its batch, then was killed; 'alive' recovered the intake
    // from the bytes kept and took the file in again.
    const config = configSchema.parse({ intake: { marker: 'required' } });
    const gone = openWorkspace(join(dir, 'gone'));
    const alive = openWorkspace(join(dir, 'alive'));
    const claim = claimName('eur.csv', clock.now());
    copyFileSync(template, join(gone.folders.processing, claim));
    const sha256 = createHash('sha256').update(readFileSync(template)).digest('hex');
    const first = await store.beginBatch({ file_name: 'eur.csv', sha256, size_bytes: statSync(template).size, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(), file_mtime_ms: null, send_after: 0, taken_by: 'gone' });
    expect(await keepFileBytes(store, first, join(gone.folders.processing, claim))).toBe(sha256);
    clock.advance(1_000);
    const other = await worker('alive');
    expect(await recoverInterruptedIntakes({ workspace: alive, store, shared: other, knownBatches: () => store.batchesInProcessing() })).toEqual([first]);
    const again = await takeFile(join(alive.folders.inbox, 'eur.csv'), { workspace: alive, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock, shared: other });
    expect(again).toMatchObject({ kind: 'accepted', ready: 3 });

    // 'gone' starts again, long after: its claimed copy belongs to a batch recovered elsewhere, whose content is taken.
    clock.advance(120_000);
    const logged: [string, Record<string, unknown>][] = [];
    const me = await worker('gone', 60_000);
    const recover = () => recoverInterruptedIntakes({ workspace: gone, store, shared: me, log: (event, fields) => logged.push([event, fields]), knownBatches: () => store.batchesInProcessing() });
    expect(await recover()).toEqual([]);
    expect(readdirSync(gone.folders.inbox)).toEqual([]);
    expect(readdirSync(gone.folders.failed)).toEqual([]);
    expect(readdirSync(gone.folders.archive).sort()).toEqual([claim, `${claim}.note.txt`]);
    expect(readFileSync(join(gone.folders.archive, `${claim}.note.txt`), 'utf8')).toMatch(new RegExp(`^eur\\.csv: its batch ${first} was rejected \\(interrupted during intake \\(worker gone stopped\\).*\\); the same content is batch ${(again as { batch: string }).batch}, accepted, which pays the file\\.\nNothing of this copy was sent; it was archived`));
    expect(logged.map(([event, fields]) => [event, fields.batch, fields.paid_as])).toEqual([['intake_copy_archived', first, (again as { batch: string }).batch]]);

    // A file of a batch settled while its worker was down (settled by another): archived, not put back.
    clock.advance(1_000);
    const settledClaim = claimName('eur.csv', clock.now());
    copyFileSync(template, join(gone.folders.processing, settledClaim));
    const settled = await store.beginBatch({ file_name: 'eur.csv', sha256, size_bytes: 1, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(), file_mtime_ms: null, send_after: 0, taken_by: 'gone' });
    expect(await store.acceptBatch(settled)).toMatchObject({ ready: 0 });
    await store.settleBatch(settled, new Date(clock.now()).toISOString());
    clock.advance(120_000);
    expect(await recover()).toEqual([]);
    expect(readdirSync(gone.folders.inbox)).toEqual([]);
    expect(readdirSync(gone.folders.archive).sort()).toEqual([claim, `${claim}.note.txt`, settledClaim].sort());

    // Another worker's eur.csv claimed in the same millisecond, its batch settled; this one's, of other content, never
    // recorded: not taken for that one (not archived), put back.
    clock.advance(1_000);
    const twinClaim = claimName('eur.csv', clock.now());
    copyFileSync(fileURLToPath(new URL('../../fixtures/templates/gbr-bank.csv', import.meta.url)), join(gone.folders.processing, twinClaim));
    const twin = await store.beginBatch({ file_name: 'eur.csv', sha256, size_bytes: 1, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(), file_mtime_ms: null, send_after: 0, taken_by: 'alive' });
    expect(await store.acceptBatch(twin)).toMatchObject({ ready: 0 });
    await store.settleBatch(twin, new Date(clock.now()).toISOString());
    clock.advance(120_000);
    expect(await recover()).toEqual([twinClaim]);
    expect(readdirSync(gone.folders.inbox)).toEqual(['eur.csv']);
    expect(readdirSync(gone.folders.archive).sort()).toEqual([claim, `${claim}.note.txt`, settledClaim].sort());
  }));

  it('a copy whose content is still being taken in by another worker: left in processing/ while that intake may fail, archived once it is accepted', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    const gone = openWorkspace(join(dir, 'gone'));
    const claim = claimName('eur.csv', clock.now());
    copyFileSync(template, join(gone.folders.processing, claim));
    const sha256 = createHash('sha256').update(readFileSync(template)).digest('hex');
    const begin = (takenBy: string) => store.beginBatch({ file_name: 'eur.csv', sha256, size_bytes: statSync(template).size, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(), file_mtime_ms: null, send_after: 0, taken_by: takenBy });
    const first = await begin('gone');
    expect(await store.rejectBatch(first, 'interrupted during intake (worker gone stopped)')).toBeTruthy();
    clock.advance(1_000);
    await worker('alive');
    const again = await begin('alive');
    // Past the lease (30 s) since the claim, within alive's: the claim is old enough to be looked at (its unrecorded
    // wait set shorter than the lease), alive still lives.
    clock.advance(29_500);
    const me = await worker('gone', 1_000);
    const recover = () => recoverInterruptedIntakes({ workspace: gone, store, shared: me, knownBatches: () => store.batchesInProcessing() });
    expect(await recover()).toEqual([]);
    expect(readdirSync(gone.folders.processing)).toEqual([claim]);
    expect(readdirSync(gone.folders.inbox)).toEqual([]);
    expect(await store.acceptBatch(again)).toMatchObject({ ready: 0 });
    expect(await recover()).toEqual([]);
    expect(readdirSync(gone.folders.processing)).toEqual([]);
    expect(readdirSync(gone.folders.archive).sort()).toEqual([claim, `${claim}.note.txt`]);
  }));

  it('a copy whose intake another worker took over, the file taken in again and its approval rejected: set aside in failed/ with that batch\'s reason, not put back to be approved again', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    const config = configSchema.parse({ intake: { marker: 'required' } });
    const [gone, alive] = [openWorkspace(join(dir, 'gone')), openWorkspace(join(dir, 'alive'))];
    const claim = claimName('eur.csv', clock.now());
    copyFileSync(template, join(gone.folders.processing, claim));
    const sha256 = createHash('sha256').update(readFileSync(template)).digest('hex');
    const first = await store.beginBatch({ file_name: 'eur.csv', sha256, size_bytes: statSync(template).size, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(), file_mtime_ms: null, send_after: 0, taken_by: 'gone' });
    await keepFileBytes(store, first, join(gone.folders.processing, claim));
    clock.advance(1_000);
    const other = await worker('alive');
    expect(await recoverInterruptedIntakes({ workspace: alive, store, shared: other, knownBatches: () => store.batchesInProcessing() })).toEqual([first]);
    const again = await takeFile(join(alive.folders.inbox, 'eur.csv'), { workspace: alive, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock, shared: other });
    const y = (again as { batch: string }).batch;
    // The approver rejects it; its release ends it (release.ts), its own file set aside in alive's failed/.
    await store.setApprovalState(y, 'rejected', 'rejected by grace: wrong month');
    expect(await store.withdrawBatch(y, 'approval_rejected', 'rejected by grace: wrong month')).toBe(true);
    expect(await setAsideEndedFile(alive, (await store.batch(y)) as BatchRecord)).not.toBeNull();

    clock.advance(120_000);
    const logged: string[] = [];
    const me = await worker('gone', 60_000);
    expect(await recoverInterruptedIntakes({ workspace: gone, store, shared: me, log: (event) => logged.push(event), knownBatches: () => store.batchesInProcessing() })).toEqual([]);
    expect(readdirSync(gone.folders.inbox)).toEqual([]);
    expect(readdirSync(gone.folders.failed).sort()).toEqual([claim, `${claim}.report.txt`]);
    expect(readFileSync(join(gone.folders.failed, `${claim}.report.txt`), 'utf8')).toMatch(new RegExp(`^eur\\.csv: batch ${y} ended before anything of it was sent: rejected by grace: wrong month\\. This copy was claimed for batch ${first} \\(interrupted during intake`));
    expect(logged).toEqual(['ended_file_set_aside']);
  }));

  it('a copy of a batch ended at release whose content was dropped in again and paid: archived with a note naming the batch that pays it, not in failed/ asking to be dropped in again', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    const gone = openWorkspace(join(dir, 'gone'));
    const claim = claimName('eur.csv', clock.now());
    copyFileSync(template, join(gone.folders.processing, claim));
    const sha256 = createHash('sha256').update(readFileSync(template)).digest('hex');
    const begin = () => store.beginBatch({ file_name: 'eur.csv', sha256, size_bytes: statSync(template).size, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(), file_mtime_ms: null, send_after: 0, taken_by: 'gone' });
    const ended = await begin();
    expect(await store.acceptBatch(ended)).toMatchObject({ ready: 0 });
    await store.setApprovalState(ended, 'rejected', 'rejected by grace');
    expect(await store.withdrawBatch(ended, 'approval_rejected', 'rejected by grace')).toBe(true);
    // Ended by a worker on whose disk the file is not; then dropped in again by a person, and paid.
    clock.advance(1_000);
    const paid = await begin();
    expect(await store.acceptBatch(paid)).toMatchObject({ ready: 0 });
    await store.settleBatch(paid, new Date(clock.now()).toISOString());
    clock.advance(120_000);
    const me = await worker('gone', 60_000);
    expect(await recoverInterruptedIntakes({ workspace: gone, store, shared: me, knownBatches: () => store.batchesInProcessing() })).toEqual([]);
    expect(readdirSync(gone.folders.failed)).toEqual([]);
    expect(readdirSync(gone.folders.archive).sort()).toEqual([claim, `${claim}.note.txt`]);
    expect(readFileSync(join(gone.folders.archive, `${claim}.note.txt`), 'utf8')).toContain(`the same content is batch ${paid}, settled, which pays the file`);
  }));

  it('two copies of one file taken in at once, by two workers: one accepted, the other refused at acceptance as the same content, its batch rejected, nothing of it sendable', () => onFreshDatabase(async ({ store, dir, clock, worker }) => {
    // Marked complete: taken at the first look.
    const config = configSchema.parse({ intake: { marker: 'required' } });
    const [a, b] = [openWorkspace(join(dir, 'a')), openWorkspace(join(dir, 'b'))];
    for (const home of [a, b]) {
      copyFileSync(template, join(home.folders.inbox, 'eur.csv'));
      writeFileSync(join(home.folders.inbox, 'eur.csv.done'), '');
    }
    const [wa, wb] = [await worker('a'), await worker('b')];
    // a's acceptance waits until b's copy is accepted: both read the file while neither was accepted.
    let bAccepted!: () => void;
    const bDone = new Promise<void>((resolve) => { bAccepted = resolve; });
    const held = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'acceptBatch') return async (...args: Parameters<PostgresStore['acceptBatch']>) => { await bDone; return target.acceptBatch(...args); };
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const deps = (home: typeof a, store: PostgresStore, shared: SharedWork) => ({ workspace: home, store, batch: config.batch, intake: config.intake, policy: 'reject_file' as const, clock, shared });
    const first = takeFile(join(a.folders.inbox, 'eur.csv'), deps(a, held, wa));
    const second = await takeFile(join(b.folders.inbox, 'eur.csv'), deps(b, store, wb));
    bAccepted();
    expect(second).toMatchObject({ kind: 'accepted', ready: 3 });
    const refused = await first;
    expect(refused).toMatchObject({ kind: 'duplicate', earlier: { id: (second as { batch: string }).batch } });
    expect(readdirSync(a.folders.failed).filter((f) => f.endsWith('.duplicate.txt'))).toHaveLength(1);
    const batches = await store.recentBatches('2026-01-01T00:00:00.000Z');
    expect(batches.map((x) => x.status).sort()).toEqual(['accepted', 'rejected']);
    const rejected = batches.find((x) => x.status === 'rejected') as { id: string; reason: string | null };
    expect(rejected.reason).toMatch(/^the same content as batch .+, accepted while this copy was read$/);
    expect(await store.unsettledRows(rejected.id)).toBe(0);
  }));
});
