/** `paybatch status [BATCH] [--json]`: open and recent batches, from the store only. */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { ExitCode, PaybatchError } from '../errors.js';

export function statusCommand(): Command {
  return new Command('status')
    .description('Show open and recent batches: rows per state, money, what is in flight, and how states were learned (webhook or polling).')
    .argument('[batch]', 'only this batch')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file (default: paybatch.config.json in the workspace); with store.url, the state of every worker')
    .option('--json', 'print JSON instead of text')
    .action(async (batch: string | undefined, opts: { home?: string; config?: string; json?: boolean }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ readStatus, readWorkers, renderStatus }, { withReadStore }] = await Promise.all([import('../engine/status.js'), import('./read-store.js')]);
      await withReadStore(opts, 'nothing has run there yet', async (store, workspace, shared) => {
        const report = await readStatus(store, systemClock, batch);
        if (shared) report.workers = await readWorkers(shared, systemClock);
        if (batch && report.batches.length === 0) throw new PaybatchError(`no batch ${batch} in ${workspace.home}`, ExitCode.failure);
        process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report, systemClock.now()));
      });
    });
}
