/** `paybatch backup FILE`: an online copy of the state database, safe to take beside a running watch. */
import { chmodSync, existsSync, lstatSync, mkdirSync, renameSync, unlinkSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { Command } from 'commander';
import { ExitCode, PaybatchError } from '../errors.js';
import { JSON_FLAG } from './json-flag.js';
import { tuneProcess } from './process-tuning.js';
import { withWorkspace } from './workspace-options.js';

export function backupCommand(): Command {
  return withWorkspace(new Command('backup'))
    .description('Copy the state database to FILE while paybatch runs (SQLite\'s online backup): what to restore after a disk failure.')
    .argument('<file>', 'where the copy goes; it must not exist yet')
    .option(...JSON_FLAG)
    .action(async (file: string, opts: { home?: string; config?: string; json?: boolean }) => {
      const { printJson } = await import('./json-output.js');
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ loadConfig, workspaceHome }, { SqliteStore }, { openWorkspace }] = await Promise.all([
        import('../config/config.js'), import('../store/sqlite/sqlite-store.js'), import('../workspace/workspace.js'),
      ]);
      const config = loadConfig({ file: opts.config, home: opts.home });
      if (config.store.url) {
        throw new PaybatchError('the state is in PostgreSQL (store.url): back it up with PostgreSQL\'s own tools (pg_dump, or the server\'s continuous archiving), not with paybatch backup', ExitCode.failure);
      }
      const workspace = openWorkspace(workspaceHome(opts.home));
      if (!existsSync(workspace.database)) throw new PaybatchError(`no paybatch database in ${workspace.home}: nothing to back up`, ExitCode.failure);
      const target = resolve(file);
      if (lstatSync(target, { throwIfNoEntry: false })) throw new PaybatchError(`${target} already exists: give a new file name (a backup never overwrites)`, ExitCode.failure);
      // A folder named but not there yet is made, private (0700): a backup holds the whole state.
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      // Written under a temporary name beside it, then renamed: a half-made copy is never taken for a backup.
      const temporary = join(dirname(target), `.${basename(target)}.${randomUUID()}.tmp`);
      tuneProcess(config, workspace);
      const store = SqliteStore.open(workspace.database);
      try {
        await store.backup(temporary);
        chmodSync(temporary, 0o600);
        renameSync(temporary, target);
      } catch (error) {
        if (existsSync(temporary)) unlinkSync(temporary);
        throw error;
      } finally {
        await store.close();
      }
      if (opts.json) printJson('backup', { database: workspace.database, file: target, bytes: lstatSync(target).size });
      else process.stdout.write(`backup of ${workspace.database} written to ${target} (${lstatSync(target).size} bytes)\n`);
    });
}
