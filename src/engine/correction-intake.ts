/**
 * At intake, a corrections file's rows are checked against the originals they
 * name (src/engine/corrections.ts): the original exists, can no longer pay and
 * was not paid, and the row carries the external_id derived from the original's.
 * A row that fails is left unpaid with why; the rest of the file is paid. Two
 * corrections of one original carry the same external_id, so the second is
 * refused when its batch is accepted (an external_id already used).
 */
import { isCorrectionForm } from '../validate/correction-id.js';
import type { IntakeStore, PipelineStore } from '../store/port.js';
import { correctable, correctionExternalId } from './corrections.js';

export type CorrectionStore = Pick<IntakeStore, 'correctionLinks' | 'setCorrectsBatch' | 'invalidateRow'> & Pick<PipelineStore, 'row'>;

export async function checkCorrections(batchId: string, store: CorrectionStore): Promise<{ corrections: number; refused: number }> {
  const links = await store.correctionLinks(batchId);
  if (links.length === 0) return { corrections: 0, refused: 0 };
  await store.setCorrectsBatch(batchId, links[0]!.original_batch);
  let refused = 0;
  for (const link of links) {
    const refuse = async (code: string, message: string): Promise<void> => {
      refused += 1;
      await store.invalidateRow(batchId, link.line, { line: link.line, column: 'original_line', code, message });
    };
    if (link.original_batch === batchId) {
      await refuse('correction_of_itself', 'a correction names a row of its own batch');
      continue;
    }
    const original = await store.row(link.original_batch, link.original_line);
    if (!original) {
      await refuse('original_not_found', `there is no line ${link.original_line} in batch ${link.original_batch}`);
      continue;
    }
    const verdict = correctable(original);
    if (!verdict.ok) {
      await refuse(verdict.code, `not taken: ${verdict.why} (batch ${link.original_batch}, line ${link.original_line})`);
      continue;
    }
    // An original without an external_id (an invalid row) gives none to derive from: the row's own is used, but never
    // one of the correction form, which would stand for a correction of another row that may still pay.
    if (!original.external_id && link.external_id && isCorrectionForm(link.external_id)) {
      await refuse('correction_external_id', `the original (batch ${link.original_batch}, line ${link.original_line}) has no external_id to derive from: give this correction an external_id of its own, not ${link.external_id}, which has the form of a correction of another row`);
      continue;
    }
    const expected = original.external_id ? correctionExternalId(original.external_id) : link.external_id;
    if (link.external_id !== expected) {
      await refuse('correction_external_id', `a correction of ${original.external_id} must carry external_id ${expected}, not ${link.external_id ?? '(none)'}: it is derived so that one original is paid at most once`);
    }
  }
  return { corrections: links.length, refused };
}
