#!/usr/bin/env node
/**
 * The `paybatch` command. Each subcommand parses its arguments and calls one use
 * case; this file owns the one top-level handler that turns errors into a clear
 * message and an exit code.
 */
import { Command, CommanderError } from 'commander';
import { ExitCode, PaybatchError } from '../errors.js';
import { sandboxCommand } from './sandbox-command.js';
import { validateCommand } from './validate-command.js';
import { runCommand } from './run-command.js';
import { demoCommand } from './demo-command.js';
import { cancelCommand } from './cancel-command.js';
import { reportCommand } from './report-command.js';
import { statusCommand } from './status-command.js';
import { watchCommand } from './watch-command.js';
import { webhooksCommand } from './webhooks-command.js';

export function buildProgram(): Command {
  const program = new Command('paybatch')
    .description('Batch payout file processor: validate payout CSVs, pay every row exactly once, follow and reconcile.')
    .version('0.1.0')
    .addCommand(sandboxCommand())
    .addCommand(validateCommand())
    .addCommand(runCommand())
    .addCommand(watchCommand())
    .addCommand(cancelCommand())
    .addCommand(statusCommand())
    .addCommand(reportCommand())
    .addCommand(webhooksCommand())
    .addCommand(demoCommand());
  // Commands added whole do not inherit these settings: every command must throw
  // instead of exiting, so that the handler below chooses the exit code.
  const all = (command: Command): Command[] => [command, ...command.commands.flatMap(all)];
  for (const command of all(program)) command.exitOverride().showHelpAfterError();
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return process.exitCode === undefined ? ExitCode.ok : Number(process.exitCode);
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (error instanceof PaybatchError) {
      process.stderr.write(`paybatch: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`paybatch: unexpected error (a bug, please report it):\n${(error as Error).stack ?? String(error)}\n`);
    return ExitCode.software;
  }
}

// Not process.exit(): it would end the process before a piped standard output is
// flushed, cutting a long report short. Commands leave no handles open.
process.exitCode = await main(process.argv);
