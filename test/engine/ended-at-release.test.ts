/**
 * A batch ended at its release (its approval rejected, expired or not verifying) whose process died before its file
 * left processing/: the next start sets the file aside in failed/ with a report, never puts it back in the inbox to be
 * taken again as a new batch (and asked to be approved again).
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { claimName } from '../../src/engine/claim-names.js';
import { recoverInterruptedIntakes } from '../../src/engine/intake-recovery.js';
import type { ApprovalGate } from '../../src/engine/approval-gate.js';
import { releaseBatch } from '../../src/engine/release.js';
import type { BatchRecord } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';

const template = fileURLToPath(new URL('../../fixtures/templates/gbr-bank.csv', import.meta.url));

describe('a file whose batch ended at release, left in processing/ by a crash', () => {
  let dir: string;
  let workspace: Workspace;
  let store: SqliteStore;
  const clock = new ManualClock('2026-11-29T01:00:00.000Z');
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-ended-'));
    workspace = openWorkspace(join(dir, 'ws'));
    store = SqliteStore.open(workspace.database);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A batch of the template, claimed now and accepted; its claimed file in processing/. */
  async function accepted(): Promise<{ id: string; claim: string }> {
    const claim = claimName('pay.csv', clock.now());
    copyFileSync(template, join(workspace.folders.processing, claim));
    const sha256 = createHash('sha256').update(readFileSync(template)).digest('hex');
    const id = await store.beginBatch({ file_name: 'pay.csv', sha256, size_bytes: statSync(template).size, policy: 'reject_file', received_at: new Date(clock.now()).toISOString(), file_mtime_ms: null, send_after: 0 });
    expect(await store.acceptBatch(id)).toMatchObject({ ready: 0 });
    return { id, claim };
  }
  const recover = () => recoverInterruptedIntakes({ workspace, store, knownBatches: () => store.batchesInProcessing() });

  it('its approval rejected: set aside in failed/ with a report naming the reason, not put back', async () => {
    const { id, claim } = await accepted();
    await store.setApprovalState(id, 'rejected', 'rejected by grace: wrong month');
    expect(await store.withdrawBatch(id, 'approval_rejected', 'rejected by grace: wrong month')).toBe(true);
    expect(await recover()).toEqual([]);
    expect(readdirSync(workspace.folders.inbox)).toEqual([]);
    expect(readdirSync(workspace.folders.processing)).toEqual([]);
    expect(readdirSync(workspace.folders.failed).sort()).toEqual([claim, `${claim}.report.txt`]);
    expect(readFileSync(join(workspace.folders.failed, `${claim}.report.txt`), 'utf8')).toBe(`pay.csv: batch ${id} ended before anything of it was sent: rejected by grace: wrong month.\nNothing of this file was sent. To pay it, drop it in the inbox again: it is taken as a new batch.\n`);
  });

  it('withdrawn because its file changed (its approval not ended): put back in the inbox, to be taken once whole', async () => {
    const { id, claim } = await accepted();
    expect(await store.withdrawBatch(id, 'file_changed', 'it changed after it was taken in')).toBe(true);
    expect(await recover()).toEqual([claim]);
    expect(readdirSync(workspace.folders.inbox)).toEqual(['pay.csv']);
    expect(readdirSync(workspace.folders.failed)).toEqual([]);
  });

  it('its approval ended after some of it was sent (withdrawBatch refuses): held, its rows not sent ended, its file left in processing/ to settle', async () => {
    const { id, claim } = await accepted();
    const batch = (await store.batch(id)) as BatchRecord;
    const gate = { enabled: true, check: async () => ({ kind: 'ended', outcome: 'approval_invalid', reason: 'an approval does not verify' }) } as unknown as ApprovalGate;
    const ended: string[] = [];
    // As the store answers when a row of the batch is at the service: nothing withdrawn.
    const sentSome = new Proxy(store, {
      get(target, key) {
        if (key === 'withdrawBatch') return async () => false;
        if (key === 'endReadyRows') return async (batchId: string, outcome: string) => (ended.push(`${batchId} ${outcome}`), 2);
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    expect(await releaseBatch(batch, { workspace, store: sentSome, clock, gate })).toEqual({ kind: 'held', reason: 'an approval does not verify', notSent: 2 });
    expect(ended).toEqual([`${id} approval_invalid`]);
    expect(readdirSync(workspace.folders.processing)).toEqual([claim]);
    expect(readdirSync(workspace.folders.failed)).toEqual([]);
  });
});
