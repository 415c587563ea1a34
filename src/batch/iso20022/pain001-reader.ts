/**
 * Reads an ISO 20022 customer credit transfer initiation (pain.001.001.03 or
 * .09, by its namespace) as a batch: streamed with saxes, never held whole.
 * Each CdtTrfTxInf becomes a row (pain001-fields.ts maps it); the group
 * header's and every PmtInf's NbOfTxs and CtrlSum are the file's own control
 * totals, checked exactly, and a file that does not match them, does not end
 * with its closing tag, or has a DOCTYPE (the way to entities and external
 * references) is refused whole. Rows are numbered as lines are in a CSV file
 * (the first transfer is 2), and every issue is placed at its transfer:
 * `PmtInf[2]/CdtTrfTxInf[17] (E2E INV-2291): CdtrAcct/Id/IBAN`.
 */
import { createHash } from 'node:crypto';
import type { SaxesParser } from 'saxes';
import type { Issue } from '../../validate/issue.js';
import { BatchFileError } from '../file-error.js';
import { checkSize } from '../file-size.js';
import type { BatchRow, OpenedBatch, ReaderOptions } from '../opened-batch.js';
import type { ByteState } from '../text-chunks.js';
import { textChunks } from '../text-chunks.js';
import type { MappingOptions } from './pain001-fields.js';
import type { Pain001Header, Seen } from './pain001-walk.js';
import { COLUMNS, Pain001Walk, checkTally, pain001Parser } from './pain001-walk.js';

export type { Pain001Header, TransferRef } from './pain001-walk.js';
export { PAIN001_NAMESPACES } from './pain001-walk.js';

/** The rows as the file's chunks are parsed; at its end, whether it is whole and its group header's control totals hold. */
async function* walkRows(chunks: AsyncGenerator<string>, parser: SaxesParser<{ position: false }>, walk: Pain001Walk): AsyncGenerator<BatchRow> {
  try {
    for await (const chunk of chunks) {
      parser.write(chunk);
      yield* walk.ready.splice(0);
    }
    parser.close();
    yield* walk.ready.splice(0);
  } finally {
    await chunks.return(undefined);
  }
  if (!walk.ended) throw new BatchFileError('xml_not_whole', null, 'the file ends before its closing </Document> tag: it is not whole (still being written, or cut short)');
  checkTally(walk.group, 'GrpHdr');
  if (walk.group.count === 0) throw new BatchFileError('no_rows', null, 'the file holds no credit transfer (CdtTrfTxInf)');
}

/** `seen`: told each transfer as read (the pain.002 writer reads the file again through it). */
export async function openPain001(path: string, options: ReaderOptions, mapping: MappingOptions, seen?: Seen): Promise<OpenedBatch & { header(): Pain001Header }> {
  await checkSize(path, options.maxFileBytes);
  const state: ByteState = { hash: createHash('sha256'), bytes: 0, lines: 1 };
  const walk = new Pain001Walk(options, mapping, { seen });
  const parser = pain001Parser(walk);
  const chunks = textChunks(path, options, state);
  return {
    delimiter: null,
    columns: COLUMNS,
    rows: walkRows(chunks, parser, walk),
    sha256: () => state.hash.copy().digest('hex'),
    header: () => walk.header(),
    place(issue: Issue): Issue {
      const cell = `${walk.where(issue.line)}: ${issue.column}`;
      return { ...issue, cell, message: `${cell}: ${issue.message}` };
    },
  };
}
