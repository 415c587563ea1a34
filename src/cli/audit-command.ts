/** `paybatch audit verify [--head SEQ:HASH]` and `paybatch audit export --from --to [--out FILE]`. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Command } from 'commander';
import type { AuditEntry, Break } from '../audit/chain.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Store } from '../store/store.js';

const PAGE = 5_000;

/** The store, loaded when a subcommand runs, not for --help (docs/performance.md). */
async function withStore<T>(home: string | undefined, work: (store: Store) => Promise<T>): Promise<T> {
  const { withReadStore } = await import('./read-store.js');
  return withReadStore({ home }, 'no audit trail yet', (store) => work(store));
}

async function* entries(store: Store): AsyncIterable<AuditEntry> {
  for (let after = 0; ;) {
    const page = await store.auditEntries(after, PAGE);
    if (page.length === 0) return;
    yield* page;
    after = (page[page.length - 1] as AuditEntry).seq;
  }
}

export function auditCommand(): Command {
  const audit = new Command('audit').description('The audit trail: append-only and hash-chained.');
  audit.addCommand(new Command('verify')
    .description('Recompute the chain and name the first entry edited, deleted, inserted or reordered; with --head, check the head a report printed is still in it.')
    .option('--head <seq:hash>', 'a chain head printed in a report or a batch summary')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .action(async (opts: { head?: string; home?: string }) => {
      const known = opts.head ? /^(\d+):([0-9a-f]{64})$/.exec(opts.head) : null;
      if (opts.head && !known) throw new UsageError('--head is SEQ:HASH, as a report prints it');
      const { ChainWalker } = await import('../audit/chain.js');
      await withStore(opts.home, async (store) => {
        const walker = new ChainWalker();
        let broken: Break | null = null;
        let headFound: boolean | null = known ? false : null;
        // One entry behind, so that each is checked with a look at the one after it (a move shows there).
        let current: AuditEntry | null = null;
        const take = (entry: AuditEntry, following?: AuditEntry): void => {
          broken ??= walker.next(entry, following);
          if (known && entry.seq === Number(known[1])) headFound = entry.hash === known[2];
        };
        for await (const entry of entries(store)) {
          if (current) take(current, entry);
          current = entry;
          if (broken) break;
        }
        if (current && !broken) take(current);
        // Assigned inside take(): the compiler cannot see it.
        const found = broken as Break | null;
        if (found) {
          process.stdout.write(`audit trail BROKEN at entry ${found.seq}: ${found.message}\n`);
          process.exitCode = ExitCode.failure;
          return;
        }
        if (headFound === false) {
          process.stdout.write(`audit trail intact on its own (${walker.count} entries), but the head ${opts.head} is not in it: the history was rewritten since that head was printed\n`);
          process.exitCode = ExitCode.failure;
          return;
        }
        process.stdout.write(`audit trail intact: ${walker.count} entries, head ${walker.head.seq}:${walker.head.hash}${known ? `; the head ${known[1]} printed earlier is in it` : ''}\n`);
      });
    }));
  audit.addCommand(new Command('export')
    .description('Write the entries of a period as JSON lines, with their hashes, for an auditor.')
    .option('--from <iso>', 'from this time (ISO 8601), included')
    .option('--to <iso>', 'until this time (ISO 8601), excluded')
    .option('--out <file>', 'write to this file instead of standard output')
    .option('--home <dir>', 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)')
    .action(async (opts: { from?: string; to?: string; out?: string; home?: string }) => {
      for (const [name, value] of [['--from', opts.from], ['--to', opts.to]] as const) {
        if (value !== undefined && Number.isNaN(Date.parse(value))) throw new UsageError(`${name} must be a time such as 2026-03-02 or 2026-03-02T09:00:00Z, not "${value}"`);
      }
      const from = opts.from ? new Date(opts.from).toISOString() : '';
      const to = opts.to ? new Date(opts.to).toISOString() : '\uffff';
      await withStore(opts.home, async (store) => {
        const out = opts.out ? createWriteStream(opts.out, { flags: 'wx', mode: 0o600 }) : process.stdout;
        let written = 0;
        for await (const entry of entries(store)) {
          if (entry.at < from || entry.at >= to) continue;
          if (!out.write(`${JSON.stringify({ ...entry, details: JSON.parse(entry.details) as unknown })}\n`)) await once(out, 'drain');
          written += 1;
        }
        if (opts.out) {
          (out as ReturnType<typeof createWriteStream>).end();
          await once(out, 'finish');
          process.stderr.write(`paybatch: ${written} audit entries written to ${opts.out}\n`);
        }
      });
    }));
  return audit;
}
