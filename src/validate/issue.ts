/**
 * What validation reports: an error (the row cannot be paid) or a warning (it
 * can, but a person may want to look). Each names its line, column and code.
 */
export interface Issue {
  /** Line in the file where the row starts (1 is the header). */
  line: number;
  /** The column as the file names it, or the canonical name when the file has no such column. */
  column: string;
  code: string;
  message: string;
  /** In a spreadsheet only: the cell, `Payouts!C7` (`Payouts!7:7` when the file has no such column). */
  cell?: string;
}

/** An issue found by a pure rule, before the reader attaches the line and the file's column name. */
export interface FieldIssue {
  field: string;
  code: string;
  message: string;
}

export const fieldIssue = (field: string, code: string, message: string): FieldIssue => ({ field, code, message });
