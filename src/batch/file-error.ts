/**
 * A problem with the file as a whole: it cannot be read as a batch, so none of
 * its rows is considered. Carries the line where it was found (in a spreadsheet,
 * the row in its sheet) and, in a spreadsheet, the cell (Payouts!C7).
 */
export type FileErrorCode =
  | 'file_unreadable'
  | 'file_too_large'
  | 'empty_file'
  | 'no_rows'
  | 'binary_content'
  | 'not_utf8'
  | 'unclosed_quote'
  | 'invalid_quote'
  | 'field_count'
  | 'row_too_large'
  | 'missing_columns'
  | 'duplicate_column'
  | 'too_many_columns'
  | 'csv_syntax'
  // .xlsx files (src/batch/xlsx-reader.ts)
  | 'not_a_workbook'
  | 'part_too_large'
  | 'markup_too_large'
  | 'shared_strings_too_large'
  | 'sheet_not_found'
  | 'empty_sheet'
  | 'formula_without_value'
  | 'cell_error'
  | 'number_not_exact'
  // ISO 20022 pain.001 files (src/batch/iso20022/)
  | 'xml_syntax'
  | 'xml_refused'
  | 'xml_not_whole'
  | 'control_totals';

export class BatchFileError extends Error {
  constructor(
    readonly code: FileErrorCode,
    readonly line: number | null,
    message: string,
    /** In a spreadsheet, where: `Payouts!C7`, or `Payouts!7:7` for a whole row. */
    readonly cell?: string,
  ) {
    super(message);
    this.name = 'BatchFileError';
  }
}
