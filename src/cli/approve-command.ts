/** `paybatch approve BATCH --key FILE --as NAME` and `paybatch reject BATCH --reason TEXT --as NAME`. */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { ConfigError } from '../errors.js';
import { parsePersonName } from './person-name.js';

const pairs = (value: string, previous: Record<string, string> = {}): Record<string, string> => {
  const [currency, amount] = value.split('=');
  return { ...previous, [(currency ?? '').toUpperCase()]: amount ?? '' };
};

export function approveCommand(): Command {
  return new Command('approve')
    .description('Approve a batch awaiting approval: sign, with your private key, exactly what will be paid and the most that may be funded.')
    .argument('<batch>', 'the batch (see paybatch status, paybatch preview)')
    .requiredOption('--key <file>', 'your private key (from paybatch keys generate)')
    .requiredOption('--as <name>', 'who you are in approvals.people', parsePersonName)
    .option('--ceiling <currency=amount>', 'the most that may be funded in an input currency, major units (repeat per currency); default: the estimate plus approvals.ceiling_margin_percent', pairs, {})
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file')
    .action(async (batch: string, opts: { key: string; as: string; ceiling: Record<string, string>; home?: string; config?: string }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ withEngineSession }, { ApprovalGate }, { approveBatch }, { money }] = await Promise.all([
        import('./engine-session.js'), import('../engine/approval-gate.js'), import('../engine/approve.js'), import('../engine/decide.js'),
      ]);
      await withEngineSession(opts, async ({ config, store }) => {
        const policy = config.approvalPolicy;
        if (!policy) throw new ConfigError('approvals are off (approvals.enabled is false): nothing to approve');
        const gate = new ApprovalGate(policy, store, systemClock, config.approvals.estimate_rates);
        const { statement, verdict } = await approveBatch(
          { batch, as: opts.as, keyFile: opts.key, ceiling: opts.ceiling },
          { store, gate, policy, clock: systemClock, marginPercent: config.approvals.ceiling_margin_percent },
        );
        const totals = Object.entries(statement.totals).map(([c, v]) => money(v, c)).join(', ');
        const ceiling = Object.entries(statement.ceiling).map(([c, v]) => money(v, c)).join(', ');
        process.stdout.write(`approved by ${opts.as}: batch ${batch}, ${statement.rows} rows, ${totals}; funding at most ${ceiling}; file SHA-256 ${statement.file_sha256}; until ${statement.expires_at}\n`);
        process.stdout.write(verdict.kind === 'approved' ? `batch ${batch} is approved (${verdict.approvers.join(', ')}): it is sent at the next pass\n` : `batch ${batch}: ${verdict.kind === 'waiting' ? verdict.reason : verdict.kind}\n`);
      }, { exclusive: false, service: false });
    });
}

export function rejectCommand(): Command {
  return new Command('reject')
    .description('Reject a batch awaiting approval: nothing of it is sent, and its results say why.')
    .argument('<batch>', 'the batch')
    .requiredOption('--reason <text>', 'why, for the results and the audit trail')
    .requiredOption('--as <name>', 'who you are in approvals.people', parsePersonName)
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file')
    .action(async (batch: string, opts: { reason: string; as: string; home?: string; config?: string }) => {
      const [{ withEngineSession }, { rejectBatch }] = await Promise.all([import('./engine-session.js'), import('../engine/approve.js')]);
      await withEngineSession(opts, async ({ config, store }) => {
        const policy = config.approvalPolicy;
        if (!policy) throw new ConfigError('approvals are off (approvals.enabled is false): nothing to reject');
        await rejectBatch({ batch, as: opts.as, reason: opts.reason }, { store, policy, clock: systemClock });
        process.stdout.write(`rejected by ${opts.as}: batch ${batch} (${opts.reason.trim()}); nothing of it is sent\n`);
      }, { exclusive: false, service: false });
    });
}
