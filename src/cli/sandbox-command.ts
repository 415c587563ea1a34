/** `paybatch sandbox`: serve the simulated payout service until stopped. */
import { Command, InvalidArgumentError } from 'commander';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number from 0 to 65535');
  return n;
}

export function sandboxCommand(): Command {
  return new Command('sandbox')
    .description('Serve a faithful local simulator of the payout service (see docs/sandbox.md).')
    .option('--port <n>', 'port to listen on (0 picks a free one; default 4010)', port)
    .option('--host <address>', 'address to listen on (default 127.0.0.1)')
    .option('--config <file>', 'sandbox configuration JSON, merged over config/sandbox.default.json')
    .option('--db <file>', 'keep state in this SQLite file so it survives a restart (default: in memory)')
    .action(async (opts: { port?: number; host?: string; config?: string; db?: string }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const { startSandbox } = await import('../sandbox/start.js');
      const overrides = { ...(opts.port !== undefined && { port: opts.port }), ...(opts.host && { host: opts.host }) };
      const sandbox = await startSandbox({
        configFile: opts.config,
        config: overrides,
        dbFile: opts.db,
        log: (line) => process.stderr.write(`sandbox: ${line}\n`),
      });
      process.stdout.write(
        [
          'paybatch sandbox is serving the payout service interface',
          `  base URL    ${sandbox.url}`,
          `  API key     ${sandbox.apiKey}`,
          `  API secret  ${sandbox.apiSecret}`,
          `  operator    ${sandbox.operatorUrl}/`,
          `  state       ${opts.db ? `kept in ${opts.db}` : 'in memory (use --db FILE to keep it)'}`,
          '  stop with Ctrl-C',
          '',
        ].join('\n'),
      );
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void sandbox.stop().then(resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
