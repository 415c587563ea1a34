/** `paybatch cancel --batch B [--external-id X] [--state error,manual]`. */
import { createInterface } from 'node:readline/promises';
import { Command, Option } from 'commander';
import { ExitCode, PaybatchError } from '../errors.js';
import { systemClock } from '../clock.js';
import type { CancelLine } from '../engine/cancel.js';
import { parseDuration } from './duration.js';
import { parsePersonName } from './person-name.js';

const list = (value: string, previous: string[] = []): string[] => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];

export function renderCancel(lines: readonly CancelLine[]): string {
  if (lines.length === 0) return 'no row matched: nothing to cancel\n';
  return `${lines.map((l) => `${l.line === null ? '     -' : String(l.line).padStart(6)}  ${l.external_id}  ${l.state_before || '?'} -> ${l.state_after ?? '?'}  ${l.cancelled ? 'cancelled' : `not cancelled: ${l.reason}`}`).join('\n')}\n`;
}

/** On a terminal: "cancel N rows? [y/N]". */
async function confirmOnTerminal(rows: number): Promise<boolean> {
  const ask = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await ask.question(`cancel ${rows} rows of this batch? [y/N] `)).trim());
  } finally {
    ask.close();
  }
}

export function cancelCommand(): Command {
  return new Command('cancel')
    .description('Cancel rows of a batch whose payout can still be stopped, and follow them to canceled or refunded.')
    .requiredOption('--batch <id>', 'the batch (as in the result file names)')
    .option('--external-id <ids>', 'only these external ids (comma-separated, or repeat the option)', list)
    .option('--state <states>', 'only rows in these states, e.g. error,manual', list)
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file')
    .addOption(new Option('--wait <duration>', 'how long to follow the cancellations').argParser(parseDuration).default(2 * 60_000, '2m'))
    .option('--as <name>', 'who asks for the cancellation (kept with each row\'s reason and in the audit trail)', parsePersonName)
    .option('--yes', 'cancel several rows without asking (on a terminal, more than one row is confirmed first)')
    .action(async (opts: { batch: string; externalId?: string[]; state?: string[]; home?: string; config?: string; wait: number; as?: string; yes?: boolean }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ withEngineSession }, { cancelRows }, { ApprovalGate }] = await Promise.all([
        import('./engine-session.js'), import('../engine/cancel.js'), import('../engine/approval-gate.js'),
      ]);
      await withEngineSession(opts, async ({ config, store, log, connection, workspace }) => {
        if (!(await store.batch(opts.batch))) throw new PaybatchError(`no batch ${opts.batch} in ${workspace.home}: nothing to cancel`, ExitCode.failure);
        const lines = await cancelRows(
          { batch: opts.batch, externalIds: opts.externalId, states: opts.state, by: opts.as, confirm: opts.yes || !process.stdin.isTTY ? undefined : confirmOnTerminal },
          { store, client: connection.client, clock: systemClock, engine: config.engine, log, waitMs: opts.wait, gate: new ApprovalGate(config.approvalPolicy, store, systemClock, config.approvals.estimate_rates) },
        );
        process.stdout.write(renderCancel(lines));
        // Nothing matched, or nothing named could be cancelled: not a success.
        if (lines.length === 0 || lines.every((l) => !l.cancelled)) process.exitCode = ExitCode.failure;
        // Beside a running watch: each row's cancellation is a guarded step of its own.
      }, { exclusive: false });
    });
}
