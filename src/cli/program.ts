/**
 * The `paybatch` program's commands, for the CLI (main.ts), for the reference
 * generated from them (docs/cli.md, scripts/generate-docs.ts) and for shell
 * completion (completion-command.ts).
 */
import { Command } from 'commander';
import { exitCodesHelp } from './exit-codes.js';
import { commandPath, globalWorkspaceOptions } from './workspace-options.js';

/** The tasks the help groups commands by, in the order it shows them. */
export const TASKS = ['Paying', 'Watching', 'Approving', 'Reconciling', 'Correcting', 'Operating'] as const;
export type Task = (typeof TASKS)[number];

interface Entry {
  task: Task;
  load: () => Promise<Command>;
}

/**
 * Each command's module is loaded only when it runs (all of them for help): a
 * `validate` of a million rows need not carry the daemon, the sandbox and the
 * HTTP client in memory. In the order the help lists them.
 */
export const COMMANDS: Readonly<Record<string, Entry>> = {
  validate: { task: 'Paying', load: async () => (await import('./validate-command.js')).validateCommand() },
  preview: { task: 'Paying', load: async () => (await import('./preview-command.js')).previewCommand() },
  run: { task: 'Paying', load: async () => (await import('./run-command.js')).runCommand() },
  demo: { task: 'Paying', load: async () => (await import('./demo-command.js')).demoCommand() },
  status: { task: 'Watching', load: async () => (await import('./status-command.js')).statusCommand() },
  watch: { task: 'Watching', load: async () => (await import('./watch-command.js')).watchCommand() },
  console: { task: 'Watching', load: async () => (await import('./console-command.js')).consoleCommand() },
  approve: { task: 'Approving', load: async () => (await import('./approve-command.js')).approveCommand() },
  reject: { task: 'Approving', load: async () => (await import('./approve-command.js')).rejectCommand() },
  allow: { task: 'Approving', load: async () => (await import('./allow-command.js')).allowCommand() },
  keys: { task: 'Approving', load: async () => (await import('./keys-command.js')).keysCommand() },
  report: { task: 'Reconciling', load: async () => (await import('./report-command.js')).reportCommand() },
  audit: { task: 'Reconciling', load: async () => (await import('./audit-command.js')).auditCommand() },
  cancel: { task: 'Correcting', load: async () => (await import('./cancel-command.js')).cancelCommand() },
  corrections: { task: 'Correcting', load: async () => (await import('./corrections-command.js')).correctionsCommand() },
  retry: { task: 'Correcting', load: async () => (await import('./corrections-command.js')).retryCommand() },
  resubmit: { task: 'Correcting', load: async () => (await import('./corrections-command.js')).resubmitCommand() },
  backup: { task: 'Operating', load: async () => (await import('./backup-command.js')).backupCommand() },
  webhooks: { task: 'Operating', load: async () => (await import('./webhooks-command.js')).webhooksCommand() },
  sandbox: { task: 'Operating', load: async () => (await import('./sandbox-command.js')).sandboxCommand() },
  completion: { task: 'Operating', load: async () => (await import('./completion-command.js')).completionCommand(buildProgram) },
};

/** commander puts its "(Did you mean --wait?)" on a line of its own: the error is one line. */
const oneLine = (text: string, write: (text: string) => void): void => write(text.replace(/\n(?=\(Did you mean )/, ' '));

/** Every command under `command`, itself first. */
export const allCommands = (command: Command): Command[] => [command, ...command.commands.flatMap(allCommands)];

/** The program; with `only`, a known command's name, just that command (what parsing it needs). */
export async function buildProgram(only?: string): Promise<Command> {
  const program = globalWorkspaceOptions(new Command('paybatch'))
    .description('Batch payout file processor: validate payout CSVs, pay every row exactly once, follow and reconcile.')
    .version('0.1.0')
    // `paybatch --home DIR run`: the program's options stop at the command's name, whose own (`sandbox --config`) come after it.
    .enablePositionalOptions();
  const names = only !== undefined && only in COMMANDS ? [only] : Object.keys(COMMANDS);
  for (const name of names) {
    const entry = COMMANDS[name] as Entry;
    program.addCommand((await entry.load()).helpGroup(`${entry.task}:`));
  }
  // Commands added whole do not inherit these settings: every command must throw
  // instead of exiting, so that the handler in main.ts chooses the exit code; a
  // wrong command line is one line and where to read more, not the whole help.
  for (const command of allCommands(program)) {
    command.exitOverride().showHelpAfterError(`see '${commandPath(command)} --help'`).configureOutput({ outputError: oneLine });
    if (command !== program) command.addHelpText('after', exitCodesHelp(commandPath(command).replace(/^paybatch /, '')));
  }
  program.addHelpText('after', '\nEach command\'s help lists the exit codes it can give; every command, option, exit code and --json shape: docs/cli.md.\nShell completion: source <(paybatch completion bash), or zsh.\n');
  return program;
}
