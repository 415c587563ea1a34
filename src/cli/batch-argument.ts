/** The batch a command works on: its argument, or `--batch`, the older spelling still accepted. */
import type { Command } from 'commander';
import { ExitCode } from '../errors.js';

/** The batch given either way; both, differing, or neither is a wrong command line (exit 64, one line). */
export function batchArgument(command: Command, argument: string | undefined, option: string | undefined): string {
  if (argument !== undefined && option !== undefined && argument !== option) {
    command.error(`error: the batch is given twice ('${argument}' and --batch '${option}'): give it once`, { exitCode: ExitCode.usage, code: 'paybatch.batchTwice' });
  }
  const batch = argument ?? option;
  if (batch === undefined) command.error('error: missing required argument \'batch\'', { exitCode: ExitCode.usage, code: 'commander.missingArgument' });
  return batch;
}
