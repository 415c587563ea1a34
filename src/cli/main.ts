#!/usr/bin/env node
/**
 * The `paybatch` command. Each subcommand parses its arguments and calls one use
 * case; this file owns the one top-level handler that turns errors into a clear
 * message and an exit code.
 */
import { CommanderError } from 'commander';
import { OutcomeUnknown, Rejected, Retryable } from '../api/errors.js';
import { ExitCode, PaybatchError, asDiskError, asPathError } from '../errors.js';
import { holdHeapUntilConfigured } from '../heap.js';
import { buildProgram } from './program.js';

// Process-wide settings (V8's heap, SQLite's temporary folder) are set by each command as it loads its
// configuration (process-tuning.ts); until then the heap is held as the defaults say. Not for the sandbox: it stands
// in for a remote service, and collecting its young generation at 1 MB took a fifth of its CPU, on the same cores as
// the paybatch it answers.
if (process.argv[2] !== 'sandbox') holdHeapUntilConfigured();

async function main(argv: string[]): Promise<number> {
  try {
    await (await buildProgram(argv[2])).parseAsync(argv);
    return process.exitCode === undefined ? ExitCode.ok : Number(process.exitCode);
  } catch (thrown) {
    // A full disk or a read-only file system is an operational failure, not a bug.
    // So is a path the person gave that cannot be used (a folder not there, one not theirs to write).
    const error = asPathError(asDiskError(thrown));
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (error instanceof PaybatchError) {
      process.stderr.write(`paybatch: ${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof Rejected || error instanceof Retryable || error instanceof OutcomeUnknown) {
      // The service answered in a way no step could act on: an operational failure, said in one line.
      process.stderr.write(`paybatch: the payout service could not be worked with: ${error.message}\n`);
      return ExitCode.unavailable;
    }
    process.stderr.write(`paybatch: unexpected error (a bug, please report it):\n${(error as Error).stack ?? String(error)}\n`);
    return ExitCode.software;
  }
}

// Not process.exit(): it would end the process before a piped standard output is
// flushed, cutting a long report short. Commands leave no handles open.
process.exitCode = await main(process.argv);
