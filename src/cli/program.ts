/**
 * The `paybatch` program's commands, for the CLI (main.ts) and for the
 * reference generated from them (docs/cli.md, scripts/generate-docs.ts).
 */
import { Command } from 'commander';

/**
 * Each command's module is loaded only when it runs (all of them for help): a
 * `validate` of a million rows need not carry the daemon, the sandbox and the
 * HTTP client in memory.
 */
export const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
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
  allow: async () => (await import('./allow-command.js')).allowCommand(),
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

