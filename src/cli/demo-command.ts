/** `paybatch demo` (npm start): a sample batch paid out on the embedded sandbox, in a fresh workspace. */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { roomForSending } from '../heap.js';
import { tuneProcess } from './process-tuning.js';
import { renderRun } from './run-command.js';
import { withWorkspace } from './workspace-options.js';

const DEMO_BATCH = fileURLToPath(new URL('../../../fixtures/demo-batch.csv', import.meta.url));

/** Invalid rows are skipped to show both kinds; the polling is the embedded sandbox's, as a newcomer's first run has it. */
const DEMO_CONFIG = { batch: { invalid_rows: 'skip_invalid' } };

export function demoCommand(): Command {
  return withWorkspace(new Command('demo'), { config: false, home: 'where to make the demo workspace (default: ./paybatch-demo/<time>; never $PAYBATCH_HOME)' })
    .description('Pay out fixtures/demo-batch.csv on the embedded sandbox in a fresh workspace, and show the results.')
    .option('--dir <dir>', 'the same as --home (the older spelling)')
    .action(async (opts: { home?: string; dir?: string }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ loadConfig }, { connectService }, { describePolling, embeddedPolling }, { engineLog }, { runOnce }, { SqliteStore }, { openWorkspace }] = await Promise.all([
        import('../config/config.js'), import('./service-connection.js'), import('./embedded-sandbox.js'), import('../engine/log.js'),
        import('../engine/run.js'), import('../store/sqlite/sqlite-store.js'), import('../workspace/workspace.js'),
      ]);
      const home = resolve(opts.home ?? opts.dir ?? join('paybatch-demo', new Date().toISOString().replace(/[:.]/g, '-')));
      const workspace = openWorkspace(home);
      writeFileSync(join(home, 'paybatch.config.json'), `${JSON.stringify(DEMO_CONFIG, null, 2)}\n`);
      const dropped = join(workspace.folders.inbox, 'demo-batch.csv');
      copyFileSync(DEMO_BATCH, dropped);
      // A sample, whole from the start: its completion marker says so, and it is taken and sent at once.
      writeFileSync(`${dropped}.done`, '');
      const loaded = loadConfig({ home, env: {} });
      tuneProcess(loaded, workspace);
      const store = SqliteStore.open(workspace.database);
      const { log, close } = engineLog(home, (line) => process.stderr.write(`paybatch: ${line}\n`));
      const connection = await connectService(loaded.service, { connections: loaded.engine.concurrency, home });
      const { polling, chosen } = embeddedPolling(loaded.engine.polling);
      const config = { ...loaded, engine: { ...loaded.engine, polling } };
      process.stdout.write(`paybatch demo: workspace ${home}\npaybatch demo: using ${connection.describe}\npaybatch demo: ${describePolling(polling, chosen)}\n`);
      try {
        const report = await runOnce({ workspace, store, client: connection.client, config, clock: systemClock, beforeSending: roomForSending, log, waitMs: 15_000, tickMs: 200 });
        process.stdout.write(renderRun(report));
        process.stdout.write(`paybatch demo: rows in manual, stuck, error or exception stay followed; the log is ${join(home, 'paybatch.log')}\n`);
      } finally {
        close();
        await connection.close();
        await store.close();
      }
    });
}
