/**
 * A problem with the file as a whole: it cannot be read as a batch, so none of
 * its rows is considered. Carries the line where it was found.
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
  | 'csv_syntax';

export class BatchFileError extends Error {
  constructor(
    readonly code: FileErrorCode,
    readonly line: number | null,
    message: string,
  ) {
    super(message);
    this.name = 'BatchFileError';
  }
}
