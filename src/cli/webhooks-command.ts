/** `paybatch webhooks sync [--replace] [--url U]` and `paybatch webhooks list`. */
import { Command } from 'commander';

interface Opts {
  home?: string;
  config?: string;
}

const shared = (command: Command): Command => command
  .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
  .option('--config <file>', 'configuration file (default: paybatch.config.json in the workspace)');

export function webhooksCommand(): Command {
  const sync = shared(new Command('sync'))
    .description('Register one webhook per event type paybatch needs at the receiver\'s public URL (watch does this at start).')
    .option('--url <url>', 'register this URL instead of watch.public_url')
    .option('--replace', 'take over event types registered for another URL')
    .action(async (opts: Opts & { url?: string; replace?: boolean }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ renderSync, syncWebhooks }, { webhookUrl }, { withEngineSession }] = await Promise.all([
        import('../engine/webhook-registration.js'), import('../config/config.js'), import('./engine-session.js'),
      ]);
      await withEngineSession(opts, async ({ config, connection }) => {
        const url = opts.url ?? webhookUrl(config.watch);
        process.stdout.write(renderSync(await syncWebhooks(connection.client, url, { replace: opts.replace }), url));
      }, { exclusive: false });
    });
  const list = shared(new Command('list'))
    .description('List the webhooks registered with the service.')
    .action(async (opts: Opts) => {
      const { withEngineSession } = await import('./engine-session.js');
      await withEngineSession(opts, async ({ connection }) => {
        const webhooks = await connection.client.listWebhooks();
        const lines = webhooks.sort((a, b) => a.event_type.localeCompare(b.event_type)).map((w) => `${w.event_type.padEnd(26)} ${w.uri}  (${w.id})`);
        process.stdout.write(`${lines.length > 0 ? lines.join('\n') : 'no webhook registered'}\n`);
      }, { exclusive: false });
    });
  return new Command('webhooks').description('Register and list the service\'s webhooks.').addCommand(sync).addCommand(list);
}
