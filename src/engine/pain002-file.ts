/**
 * Writes outbox/BATCH.pain002.xml for a batch taken from a pain.001: its file
 * is read again (it must still be the file validated: its SHA-256 is checked
 * before the report is put in place), and each transfer is answered with its
 * row's result, in the file's order. Written under a temporary name and
 * renamed, so an ERP never reads half a report; written again, it is replaced.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { TransferRef } from '../batch/iso20022/pain001-reader.js';
import { openPain001 } from '../batch/iso20022/pain001-reader.js';
import type { ReaderOptions } from '../batch/opened-batch.js';
import type { AnsweredTransfer, TxStatus } from '../reports/pain002.js';
import { pain002, transferStatus } from '../reports/pain002.js';
import type { ResultRow } from '../store/port.js';
import type { BatchRecord, Store } from '../store/port.js';
import { openSafely } from '../workspace/safe-files.js';
import type { Workspace } from '../workspace/workspace.js';
import { claimName } from './claim-names.js';

export interface Pain002Deps {
  workspace: Workspace;
  store: Pick<Store, 'resultRows'>;
  clock: Clock;
  reader: ReaderOptions;
}

/** Whether a batch came from a pain.001, and so is answered with a pain.002. */
export const answersWithPain002 = (batch: Pick<BatchRecord, 'file_name'>): boolean => /\.xml$/i.test(batch.file_name);

/** Where a batch's pain.001 is now: archived once settled, in processing/ while it is sent. */
export function pain001Of(workspace: Workspace, batch: Pick<BatchRecord, 'file_name' | 'received_at'>): string {
  const name = claimName(batch.file_name, Date.parse(batch.received_at));
  const archived = join(workspace.folders.archive, name);
  return existsSync(archived) ? archived : join(workspace.folders.processing, name);
}

/** Writes the report for `batch`, reading its pain.001 at `source`; returns the report's path. */
export async function writePain002(deps: Pain002Deps, batch: Pick<BatchRecord, 'id' | 'sha256'>, source: string): Promise<string> {
  const counts: Record<TxStatus, number> = { ACSC: 0, RJCT: 0, PDNG: 0 };
  for await (const row of deps.store.resultRows(batch.id)) counts[transferStatus(row).status] += 1;
  const seen: TransferRef[] = [];
  const opened = await openPain001(source, deps.reader, deps.reader.iso20022 ?? { senders: {}, allowEquivalentAmount: false }, (transfer) => seen.push(transfer));
  // The group header comes before any transfer: read up to the first row to know it.
  const rows = opened.rows[Symbol.asyncIterator]();
  const first = await rows.next();
  const header = opened.header();
  async function* answered(): AsyncGenerator<AnsweredTransfer> {
    const results = deps.store.resultRows(batch.id)[Symbol.asyncIterator]();
    let next = first;
    for (;;) {
      for (const transfer of seen.splice(0)) yield { ...transfer, row: await resultOf(results, transfer) };
      if (next.done) break;
      next = await rows.next();
    }
  }
  const file = join(deps.workspace.folders.outbox, `${batch.id}.pain002.xml`);
  const out = await openSafely(deps.workspace.home, file);
  try {
    const pieces = pain002({
      version: header.version, originalMessageId: header.messageId, originalCount: header.count, originalSum: header.sum,
      messageId: batch.id.slice(0, 35), createdAt: new Date(deps.clock.now()).toISOString().slice(0, 19), counts,
    }, answered());
    for await (const piece of pieces) if (!out.stream.write(piece)) await once(out.stream, 'drain');
    if (opened.sha256() !== batch.sha256) throw new Error(`${source} is no longer the file that was validated (SHA-256 ${opened.sha256()}, validated ${batch.sha256}): no status report is written from it`);
  } catch (error) {
    await out.abandon();
    throw error;
  }
  await out.commit();
  return file;
}

/** The result row of a transfer: the rows come in line order, as the transfers do. */
async function resultOf(results: AsyncIterator<ResultRow>, transfer: TransferRef): Promise<ResultRow> {
  for (;;) {
    const next = await results.next();
    if (next.done) throw new Error(`the transfer on line ${transfer.line} (E2E ${transfer.endToEndId}) has no row in the batch`);
    if (next.value.line === transfer.line) return next.value;
    if (next.value.line > transfer.line) throw new Error(`the transfer on line ${transfer.line} (E2E ${transfer.endToEndId}) has no row in the batch`);
  }
}
