/**
 * `paybatch corrections BATCH [--out FILE]`, `paybatch retry BATCH --reason R`
 * and `paybatch resubmit FILE`: paying again, safely, the rows that ended unpaid
 * (see src/engine/corrections.ts).
 */
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Command } from 'commander';
import { RETRY_AS_IS } from '../engine/corrections.js';
import { ExitCode, PaybatchError, UsageError } from '../errors.js';

/** What the commands need when they run, not for --help (docs/performance.md). */
const load = () => Promise.all([import('../engine/corrections-file.js'), import('../workspace/safe-files.js'), import('./read-store.js')]);

const list = (value: string, previous: string[] = []): string[] => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$/;

export function correctionsCommand(): Command {
  return new Command('corrections')
    .description('Write a corrections file of the rows of a batch that ended unpaid: each with the external_id its correction carries, why it was not paid and what to fix. Fix it, then drop it in the inbox (or paybatch resubmit FILE).')
    .argument('<batch>', 'the batch')
    .option('--out <file>', 'where to write it (default: the outbox, BATCH.corrections.csv)')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file')
    .action(async (batch: string, opts: { out?: string; home?: string; config?: string }) => {
      const [{ correctionsFile }, { writeFileSafely }, { withReadStore }] = await load();
      await withReadStore(opts, 'nothing has run there yet', async (store, workspace) => {
        if (!(await store.batch(batch))) throw new PaybatchError(`no batch ${batch} in ${workspace.home}`, ExitCode.failure);
        const { text, lines } = await correctionsFile(store, batch);
        const out = opts.out ? resolve(opts.out) : join(workspace.folders.outbox, `${batch}.corrections.csv`);
        if (opts.out) {
          await writeFileSafely(resolve(out, '..'), out, text);
        } else {
          await writeFileSafely(workspace.home, out, text);
        }
        for (const l of lines) process.stderr.write(`line ${l.line}  ${l.external_id}  ${l.unpaid.state}  ${l.unpaid.reason}  → fix: ${l.unpaid.toFix}\n`);
        process.stdout.write(`${out}\n`);
        process.stderr.write(lines.length === 0 ? `batch ${batch}: no row ended unpaid (or every such row could still pay): the file has its header only\n` : `${lines.length} unpaid row(s) of ${batch}: fix them in ${out}, then drop it in ${workspace.folders.inbox} (or paybatch resubmit)\n`);
      });
    });
}

export function retryCommand(): Command {
  return new Command('retry')
    .description('Pay again, as they were, the rows of a batch that ended unpaid for a reason that needs no change of details (after a balance top-up, say): their corrections go straight to the inbox as a child batch.')
    .argument('<batch>', 'the batch')
    .requiredOption('--reason <codes>', `the reason codes to retry (comma-separated; any of ${[...RETRY_AS_IS].join(', ')})`, list)
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file')
    .action(async (batch: string, opts: { reason: string[]; home?: string; config?: string }) => {
      const wrong = opts.reason.filter((r) => !RETRY_AS_IS.has(r));
      if (wrong.length > 0) throw new UsageError(`--reason ${wrong.join(', ')}: rows refused for that need their details fixed first: use paybatch corrections ${batch}`);
      const [{ correctionsFile }, { writeFileSafely }, { withReadStore }] = await load();
      await withReadStore(opts, 'nothing has run there yet', async (store, workspace) => {
        if (!(await store.batch(batch))) throw new PaybatchError(`no batch ${batch} in ${workspace.home}`, ExitCode.failure);
        const { text, lines } = await correctionsFile(store, batch, new Set(opts.reason));
        if (lines.length === 0) throw new PaybatchError(`batch ${batch} has no unpaid row for ${opts.reason.join(', ')} that could be paid again now`, ExitCode.failure);
        const file = join(workspace.folders.inbox, `${batch}.retry-${opts.reason.join('+')}-${Date.now()}.csv`);
        await writeFileSafely(workspace.home, file, text);
        process.stdout.write(`${file}\n`);
        process.stderr.write(`${lines.length} row(s) of ${batch} to pay again (${opts.reason.join(', ')}): taken from the inbox by paybatch run or watch\n`);
      });
    });
}

export function resubmitCommand(): Command {
  return new Command('resubmit')
    .description('Put a corrections file (fixed by hand) in the inbox, whole, to be paid as a child batch of its original.')
    .argument('<file>', 'the corrections file')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .option('--config <file>', 'configuration file')
    .action(async (file: string, opts: { home?: string; config?: string }) => {
      const name = basename(file);
      if (!NAME.test(name) || !/\.(csv|xlsx)$/i.test(name)) throw new UsageError(`${name}: a .csv or .xlsx file name of letters, digits, dots, dashes and underscores`);
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch (error) {
        throw new PaybatchError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, ExitCode.failure);
      }
      const [, { writeFileSafely }, { withReadStore }] = await load();
      await withReadStore(opts, 'nothing has run there yet', async (_store, workspace) => {
        const into = join(workspace.folders.inbox, name);
        // Written beside its final name, then renamed: the inbox never sees half of it.
        await writeFileSafely(workspace.home, into, bytes);
        process.stdout.write(`${into}\n`);
      });
    });
}
