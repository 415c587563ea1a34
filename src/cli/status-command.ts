/** `paybatch status [BATCH] [--json]`: open and recent batches, from the store only. */
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { workspaceHome } from '../config/config.js';
import { readStatus, renderStatus } from '../engine/status.js';
import { ExitCode, PaybatchError } from '../errors.js';
import { SqliteStore } from '../store/sqlite-store.js';
import { openWorkspace } from '../workspace/workspace.js';

export function statusCommand(): Command {
  return new Command('status')
    .description('Show open and recent batches: rows per state, money, what is in flight, and how states were learned (webhook or polling).')
    .argument('[batch]', 'only this batch')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--json', 'print JSON instead of text')
    .action(async (batch: string | undefined, opts: { home?: string; json?: boolean }) => {
      const workspace = openWorkspace(workspaceHome(opts.home));
      if (!existsSync(workspace.database)) throw new PaybatchError(`no paybatch database in ${workspace.home}: nothing has run there yet`, ExitCode.failure);
      const store = SqliteStore.open(workspace.database);
      try {
        const report = await readStatus(store, systemClock, batch);
        if (batch && report.batches.length === 0) throw new PaybatchError(`no batch ${batch} in ${workspace.home}`, ExitCode.failure);
        process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report, systemClock.now()));
      } finally {
        await store.close();
      }
    });
}
