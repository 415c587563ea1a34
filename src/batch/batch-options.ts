/** The reader's and the row rules' options, from the configuration and the clock. */
import type { Clock } from '../clock.js';
import type { BatchConfig } from '../config/config.js';
import { maxRowAmountMinor } from '../config/config.js';
import type { RowRuleOptions } from '../validate/row-rules.js';
import type { ReaderOptions } from './opened-batch.js';

export function readerOptions(batch: BatchConfig): ReaderOptions {
  return {
    delimiter: batch.delimiter === 'tab' ? '\t' : batch.delimiter,
    columnMapping: batch.column_mapping,
    maxFileBytes: batch.max_file_bytes,
    maxCompressionRatio: batch.max_compression_ratio,
    maxSharedStringsBytes: batch.max_shared_strings_bytes,
    maxRowCharacters: batch.max_row_characters,
    maxColumns: batch.max_columns,
    scratchAfterBytes: batch.scratch_after_bytes,
    parallelMinBytes: batch.parallel_min_bytes,
    sheet: batch.sheet,
    decimalSeparator: batch.decimal_separator,
    iso20022: {
      senders: batch.iso20022.senders,
      ...(batch.iso20022.input_currency === undefined ? {} : { inputCurrency: batch.iso20022.input_currency }),
      allowEquivalentAmount: batch.iso20022.allow_equivalent_amount,
    },
  };
}

export function ruleOptions(batch: BatchConfig, clock: Clock): RowRuleOptions {
  return {
    today: new Date(clock.now()).toISOString().slice(0, 10),
    decimalSeparator: batch.decimal_separator,
    maxRowAmount: maxRowAmountMinor(batch),
  };
}
