/**
 * A run of a pain.001's CdtTrfTxInf elements, cut from the file by
 * pain001-cut.ts, parsed (transfer-scan.ts, or saxes where it declines), mapped (pain001-fields.ts) and checked by
 * the row rules on a worker thread, as the whole file's walk would have done
 * it: each row at its line, each issue placed at its transfer
 * (`PmtInf[2]/CdtTrfTxInf[17] (E2E INV-2291): CdtrAcct/Id/IBAN`). Besides the
 * rows (segment-check.ts's columns), the answer carries what the control
 * totals need: how many transfers, their amounts' exact sum, and their
 * EndToEndIds (for the places of findings across rows). Pure.
 */
import type { Issue } from '../../validate/issue.js';
import type { RowRuleOptions } from '../../validate/row-rules.js';
import { checkRow } from '../check-rows.js';
import { BatchFileError } from '../file-error.js';
import type { CheckedSegment } from '../segment-check.js';
import { CheckedRows } from '../segment-check.js';
import type { MappingOptions } from './pain001-fields.js';
import type { Resume } from './pain001-walk.js';
import { COLUMNS, Pain001Walk, pain001Parser } from './pain001-walk.js';
import { scanTransfers } from './transfer-scan.js';

export interface Pain001SegmentTask {
  index: number;
  /** Whole CdtTrfTxInf elements, one after another. */
  text: string;
  /** The line of its first transfer (the file's first transfer is line 2). */
  startLine: number;
  resume: Resume;
  mapping: MappingOptions;
  rules: RowRuleOptions;
  maxRowCharacters: number;
  keepRows: boolean;
}

export interface Pain001Segment extends CheckedSegment {
  payment: number;
  /** Transfers read (rows), and their amounts' sum in 10^-17 (decimal.ts), as text. */
  transfers: number;
  sum: string;
  endToEndIds: (string | null)[];
}

/** A transfer takes some 600 characters in the files ERPs write: the rows' columns are sized for that, and grow if need be. */
const CHARS_PER_TRANSFER = 400;

export function checkPain001Segment(task: Pain001SegmentTask): Pain001Segment {
  // The plain XML ERPs write is read by the scanner; anything else, or anything wrong, by saxes, from the start again.
  return checkRun(task, true) ?? (checkRun(task, false) as Pain001Segment);
}

/** The run read by the scanner (`scan`) or by saxes; null when the scanner does not read it to its end. */
function checkRun(task: Pain001SegmentTask, scan: boolean): Pain001Segment | null {
  const rows = new CheckedRows(Math.ceil(task.text.length / CHARS_PER_TRANSFER), task.keepRows);
  const endToEndIds: (string | null)[] = [];
  const walk: Pain001Walk = new Pain001Walk({ maxRowCharacters: task.maxRowCharacters }, task.mapping, { row: (row) => {
    const { checked, verdict } = checkRow(COLUMNS, task.rules, row);
    if (checked.errors.length > 0 || checked.warnings.length > 0) {
      const where = walk.where(row.line);
      const place = (issue: Issue): Issue => {
        const cell = `${where}: ${issue.column}`;
        return { ...issue, cell, message: `${cell}: ${issue.message}` };
      };
      for (const issues of [checked.errors, checked.warnings]) for (let i = 0; i < issues.length; i++) issues[i] = place(issues[i] as Issue);
    }
    rows.add(row.line, checked, verdict);
    endToEndIds.push(walk.endToEndOf(row.line) ?? null);
  } }, task.resume);
  let failure: unknown = null;
  try {
    // One element around the transfers: a document has one root.
    if (scan) {
      if (!scanTransfers(task.text, walk, 'W')) return null;
    } else {
      const parser = pain001Parser(walk);
      parser.write('<W>');
      parser.write(task.text);
      parser.write('</W>');
      parser.close();
    }
    if (!walk.ended) throw new BatchFileError('xml_syntax', null, 'not well-formed XML: a CdtTrfTxInf was cut short');
  } catch (error) {
    // What the walk refuses is refused as saxes's reading meets it: saxes may find the XML wrong before it.
    if (scan) return null;
    failure = error;
  }
  return { ...rows.result(task.index, failure), payment: task.resume.paymentIndex, transfers: walk.group.count, sum: walk.group.sum.toString(), endToEndIds };
}
