/**
 * `paybatch console`: the operations console, read-only, against the
 * workspace's database or the PostgreSQL store (the console of `paybatch watch`,
 * with console.enabled, can also cancel, approve and reject); and
 * `paybatch console login NAME`: a one-time sign-in code for a person.
 */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { ExitCode, PaybatchError, UsageError } from '../errors.js';
import { parsePersonName } from './person-name.js';

function listenOption(value: string | undefined, fallback: { host: string; port: number }): { host: string; port: number } {
  if (!value) return fallback;
  const match = /^(.+):(\d{1,5})$/.exec(value);
  if (!match || Number(match[2]) > 65_535) throw new UsageError('--listen is HOST:PORT, such as 127.0.0.1:8788');
  return { host: (match[1] as string).replace(/^\[(.*)\]$/, '$1'), port: Number(match[2]) };
}

/** Resolves at the first SIGINT or SIGTERM. */
const untilSignal = (): Promise<NodeJS.Signals> => new Promise((resolve) => {
  process.once('SIGINT', () => resolve('SIGINT'));
  process.once('SIGTERM', () => resolve('SIGTERM'));
});

export function consoleCommand(): Command {
  const command = new Command('console')
    .description('Serve the operations console, read-only (no cancel, approve or reject: paybatch watch serves the console that acts, with console.enabled); until SIGINT or SIGTERM.')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file (default: paybatch.config.json in the workspace); with store.url, every worker\'s state')
    .option('--listen <host:port>', 'where to listen (default: console.listen)')
    .action(async (opts: { home?: string; config?: string; listen?: string }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ loadConfig }, { startConsole }, { engineLog }, { withReadStore }] = await Promise.all([
        import('../config/config.js'), import('../console/server.js'), import('../engine/log.js'), import('./read-store.js'),
      ]);
      const config = loadConfig({ file: opts.config, home: opts.home });
      const listen = listenOption(opts.listen, config.console.listen);
      await withReadStore(opts, 'nothing has run there yet', async (store, workspace) => {
        const { log, close } = engineLog(workspace.home, (line) => process.stderr.write(`paybatch: ${line}\n`));
        try {
          const server = await startConsole({ store, config, clock: systemClock, workspace, log, actions: null }, listen);
          process.stderr.write(`paybatch: console (read-only) at ${server.url}; sign in with a code from paybatch console login NAME\n`);
          const signal = await untilSignal();
          process.stderr.write(`paybatch: ${signal}: stopping the console\n`);
          await server.close();
        } finally {
          close();
        }
      });
    });
  command.addCommand(new Command('login')
    .description('Give a person a one-time code to sign in to the console with (it lasts console.code_ms and works once).')
    .argument('<name>', 'the person, as named in approvals.people or console.people', parsePersonName)
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file')
    .action(async (name: string, _opts: unknown, self: Command) => {
      // --home and --config belong to `console` too: read them wherever they were given.
      const opts = self.optsWithGlobals<{ home?: string; config?: string }>();
      const [{ loadConfig }, { issueCode }, { consoleRole }, { withReadStore }] = await Promise.all([
        import('../config/config.js'), import('../console/auth.js'), import('../console/roles.js'), import('./read-store.js'),
      ]);
      const config = loadConfig({ file: opts.config, home: opts.home });
      const role = consoleRole({ approvals: config.approvals.people, console: config.console.people }, name);
      if (role === null) throw new PaybatchError(`${name} is neither in approvals.people nor in console.people: nobody of that name may sign in`, ExitCode.failure);
      await withReadStore(opts, 'nothing has run there yet', async (store) => {
        const { code, expiresAt } = await issueCode(store, name, systemClock, config.console.code_ms);
        await store.appendAudit({ at: new Date(systemClock.now()).toISOString(), actor: 'paybatch', action: 'console_code_issued', subject: name, details: { role, expires_at: new Date(expiresAt).toISOString() } });
        process.stderr.write(`one-time code for ${name} (${role}), good once until ${new Date(expiresAt).toISOString()}:\n`);
        process.stdout.write(`${code}\n`);
      });
    }));
  return command;
}
