/**
 * An intake a worker died in, on PostgreSQL with workspaces of their own (as
 * on several machines): another worker writes the file back into its own
 * inbox from the bytes kept in the database, whole and marked complete, and
 * takes it in afresh.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { claimName, recoverInterruptedIntakes, takeFile } from '../../src/engine/intake.js';
import { keepFileBytes } from '../../src/engine/kept-files.js';
import { SharedWork } from '../../src/engine/shared-work.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

const available = await postgresAvailable('the recovery of an intake a worker died in, on PostgreSQL');
const template = fileURLToPath(new URL('../../fixtures/templates/eur-iban-bank.csv', import.meta.url));

describe.skipIf(!available)('an intake a worker died in, on PostgreSQL', () => {
  it('is written back into another worker\'s inbox from the bytes kept, with its marker, and taken in with the marker required', async () => {
    const database = await freshDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-intake-shared-'));
    const store = await PostgresStore.open(database.url);
    let other: SharedWork | null = null;
    try {
      const clock = new ManualClock(Date.parse('2026-11-25T10:00:00.000Z'));
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

      other = await SharedWork.join(store, clock, { name: 'alive', leaseMs: 30_000, serviceConcurrency: 2 });
      expect(await recoverInterruptedIntakes({ workspace: alive, store, shared: other, knownBatches: () => store.batchesInProcessing() })).toEqual([batch]);
      expect(readdirSync(alive.folders.inbox).sort()).toEqual(['eur.csv', 'eur.csv.done']);
      expect(readFileSync(join(alive.folders.inbox, 'eur.csv'))).toEqual(readFileSync(template));

      const config = configSchema.parse({ intake: { marker: 'required' } });
      const outcome = await takeFile(join(alive.folders.inbox, 'eur.csv'), {
        workspace: alive, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock, shared: other,
      });
      expect(outcome).toMatchObject({ kind: 'accepted', ready: 3 });
    } finally {
      await other?.leave();
      await store.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
