#!/usr/bin/env node
/**
 * The `paybatch` command. Each subcommand parses its arguments and calls one use
 * case; this file owns the one top-level handler that turns errors into a clear
 * message and an exit code.
 */
import { Command, CommanderError } from 'commander';
import { OutcomeUnknown, Rejected, Retryable } from '../api/errors.js';
import { ExitCode, PaybatchError, asDiskError, asPathError } from '../errors.js';
import { keepHeapNearLive } from '../heap.js';

// Not for the sandbox: it stands in for a remote service, and collecting its young generation
// at 1 MB took a fifth of its CPU, on the same cores as the paybatch it answers.
if (process.argv[2] !== 'sandbox') keepHeapNearLive();

/**
 * Each command's module is loaded only when it runs (all of them for help): a
 * `validate` of a million rows need not carry the daemon, the sandbox and the
 * HTTP client in memory.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  sandbox: async () => (await import('./sandbox-command.js')).sandboxCommand(),
  validate: async () => (await import('./validate-command.js')).validateCommand(),
  run: async () => (await import('./run-command.js')).runCommand(),
  watch: async () => (await import('./watch-command.js')).watchCommand(),
  cancel: async () => (await import('./cancel-command.js')).cancelCommand(),
  status: async () => (await import('./status-command.js')).statusCommand(),
  report: async () => (await import('./report-command.js')).reportCommand(),
  webhooks: async () => (await import('./webhooks-command.js')).webhooksCommand(),
  backup: async () => (await import('./backup-command.js')).backupCommand(),
  keys: async () => (await import('./keys-command.js')).keysCommand(),
  audit: async () => (await import('./audit-command.js')).auditCommand(),
  preview: async () => (await import('./preview-command.js')).previewCommand(),
  approve: async () => (await import('./approve-command.js')).approveCommand(),
  reject: async () => (await import('./approve-command.js')).rejectCommand(),
  demo: async () => (await import('./demo-command.js')).demoCommand(),
  console: async () => (await import('./console-command.js')).consoleCommand(),
  corrections: async () => (await import('./corrections-command.js')).correctionsCommand(),
  retry: async () => (await import('./corrections-command.js')).retryCommand(),
  resubmit: async () => (await import('./corrections-command.js')).resubmitCommand(),
};

/** The program; with `only`, a known command's name, just that command (what parsing it needs). */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('paybatch')
    .description('Batch payout file processor: validate payout CSVs, pay every row exactly once, follow and reconcile.')
    .version('0.1.0');
  const names = only !== undefined && only in COMMANDS ? [only] : Object.keys(COMMANDS);
  for (const name of names) program.addCommand(await (COMMANDS[name] as () => Promise<Command>)());
  // Commands added whole do not inherit these settings: every command must throw
  // instead of exiting, so that the handler below chooses the exit code.
  const all = (command: Command): Command[] => [command, ...command.commands.flatMap(all)];
  for (const command of all(program)) command.exitOverride().showHelpAfterError();
  return program;
}

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
