/**
 * The correction form of an external_id (`X~R1`, `X~R2`, ...): reserved for
 * corrections (src/engine/corrections.ts derives it). A row carrying it is a
 * correction, whatever file it comes in, so it must name its original
 * (original_batch, original_line) and is then checked against it at intake:
 * the original ended unpaid, and the id is the one derived from the original's.
 * A plain row with such an id would otherwise pay `X` a second time while `X`
 * could still pay (finding 9). Pure.
 */
import type { RowFields } from './fields.js';
import type { Findings } from './findings.js';

/** `base~R<generation>`: the generation is 1 to 999999, without a leading zero. */
export const CORRECTION_FORM = /^(.*)~R([1-9]\d{0,5})$/s;

export const isCorrectionForm = (externalId: string): boolean => CORRECTION_FORM.test(externalId);

/** A row whose external_id has the correction form but names no original: refused, never sent. */
export function checkCorrectionId(values: RowFields, out: Findings): void {
  const id = values.external_id;
  if (!id || !isCorrectionForm(id)) return;
  if (values.original_batch?.trim() || values.original_line?.trim()) return;
  const base = (CORRECTION_FORM.exec(id) as RegExpExecArray)[1] as string;
  out.error('external_id', 'correction_id_reserved',
    `external_id ${id} has the form of a correction of ${base} (~R and a number): such ids are kept for corrections, which name the row they pay again in original_batch and original_line (paybatch corrections writes them); give this row another external_id, or correct ${base} with paybatch corrections`);
}
