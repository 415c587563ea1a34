/** `paybatch allow BATCH --external-id X --reason TEXT --as NAME`: send a row held as a possible duplicate. */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { ExitCode, PaybatchError } from '../errors.js';
import { parsePersonName } from './person-name.js';
import { withWorkspace } from './workspace-options.js';

export function allowCommand(): Command {
  return withWorkspace(new Command('allow'))
    .description('Allow a row held as a possible duplicate payment to be sent (recorded in the audit trail); the next run or watch sends it.')
    .argument('<batch>', 'the batch (as in the result file names)')
    .requiredOption('--external-id <id>', 'the row to allow')
    .requiredOption('--reason <text>', 'why this payment is meant (kept in the audit trail)')
    .requiredOption('--as <name>', 'who allows it (kept in the audit trail)', parsePersonName)
    .action(async (batch: string, opts: { externalId: string; reason: string; as: string; home?: string; config?: string }) => {
      const reason = opts.reason.trim();
      if (reason === '') throw new PaybatchError('--reason must say why the payment is meant', ExitCode.usage);
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ loadConfig }, { allowRow }, { describeTwin }, { withReadStore }] = await Promise.all([
        import('../config/config.js'), import('../engine/allow.js'), import('../engine/duplicates.js'), import('./read-store.js'),
      ]);
      const config = loadConfig({ file: opts.config, home: opts.home });
      await withReadStore(opts, 'nothing to allow', async (store) => {
        const outcome = await allowRow({ batch, externalId: opts.externalId, reason, person: opts.as }, { store, clock: systemClock, batch: config.batch });
        if (outcome.kind === 'refused') throw new PaybatchError(`not allowed: ${outcome.why}`, ExitCode.failure);
        const twins = outcome.twins.map((t) => describeTwin(t)).join('; ');
        process.stdout.write(`allowed ${batch} line ${outcome.line} (external_id ${opts.externalId}) by ${opts.as}: ${reason}${twins ? `\n  twin: ${twins}` : ''}\n  the next paybatch run (or a running watch) sends it\n`);
      });
    });
}
