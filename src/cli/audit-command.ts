/** `paybatch audit verify [--head SEQ:HASH]` and `paybatch audit export --from --to [--out FILE]`. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Command } from 'commander';
import type { AuditEntry } from '../audit/chain.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Store } from '../store/port.js';
import { JSON_FLAG } from './json-flag.js';
import { withWorkspace } from './workspace-options.js';

const PAGE = 500;

/** The store, loaded when a subcommand runs, not for --help (docs/performance.md). */
async function withStore<T>(opts: { home?: string; config?: string }, work: (store: Store) => Promise<T>): Promise<T> {
  const { withReadStore } = await import('./read-store.js');
  return withReadStore(opts, 'no audit trail yet', (store) => work(store));
}

async function* entries(store: Store): AsyncIterable<AuditEntry> {
  for (let after = 0; ;) {
    const page = await store.auditEntries(after, PAGE);
    if (page.length === 0) return;
    yield* page;
    after = (page[page.length - 1] as AuditEntry).seq;
  }
}

/** Verifies the whole trail (engine/audit-verification.ts), and leaves the result for the console (audit-kept.ts). */
async function verifyTrail(opts: { head?: string; home?: string; config?: string; json?: boolean }): Promise<void> {
  const { printJson } = await import('./json-output.js');
  const known = opts.head ? /^(\d+):([0-9a-f]{64})$/.exec(opts.head) : null;
  if (opts.head && !known) throw new UsageError('--head is SEQ:HASH, as a report prints it');
  const { verifyWholeTrail } = await import('../engine/audit-verification.js');
  const { keepFullVerification } = await import('../console/audit-kept.js');
  await withStore(opts, async (store) => {
    const { entries: count, head, broken: found, counts, reached } = await verifyWholeTrail(store);
    // The head given is looked for among the entries verified, up to the break if there is one.
    const given = known && Number(known[1]) <= reached ? await store.auditEntryAt(Number(known[1])) : undefined;
    const headFound: boolean | null = known ? given?.hash === known[2] : null;
    await keepFullVerification(store, found ? null : { seq: head.seq, hash: head.hash, verified_at: new Date().toISOString(), counts });
    if (opts.json) {
      printJson('audit verify', {
        intact: !found && headFound !== false, entries: count,
        head: found || count === 0 ? null : { seq: head.seq, hash: head.hash },
        broken: found ? { seq: found.seq, message: found.message } : null,
        head_given: known ? { seq: Number(known[1]), hash: known[2] as string, found: headFound !== false } : null,
      });
      if (found || headFound === false) process.exitCode = ExitCode.failure;
      return;
    }
    if (found) {
      process.stdout.write(`audit trail BROKEN at entry ${found.seq}: ${found.message}\n`);
      process.exitCode = ExitCode.failure;
      return;
    }
    if (headFound === false) {
      process.stdout.write(`audit trail intact on its own (${count} entries), but the head ${opts.head} is not in it: the history was rewritten since that head was printed\n`);
      process.exitCode = ExitCode.failure;
      return;
    }
    process.stdout.write(`audit trail intact: ${count} entries, head ${head.seq}:${head.hash}${known ? `; the head ${known[1]} printed earlier is in it` : ''}\n`);
  });
}

export function auditCommand(): Command {
  const audit = new Command('audit').description('The audit trail: append-only and hash-chained.');
  audit.addCommand(withWorkspace(new Command('verify'))
    .description('Recompute the chain and name the first entry edited, deleted, inserted or reordered; with --head, check the head a report printed is still in it.')
    .option('--head <seq:hash>', 'a chain head printed in a report or a batch summary')
    .option(...JSON_FLAG)
    .action(verifyTrail));
  audit.addCommand(withWorkspace(new Command('export'))
    .description('Write the entries of a period as JSON lines, with their hashes, for an auditor.')
    .option('--from <iso>', 'from this time (ISO 8601), included')
    .option('--to <iso>', 'until this time (ISO 8601), excluded')
    .option('--out <file>', 'write to this file instead of standard output')
    .action(async (opts: { from?: string; to?: string; out?: string; home?: string; config?: string }) => {
      for (const [name, value] of [['--from', opts.from], ['--to', opts.to]] as const) {
        if (value !== undefined && Number.isNaN(Date.parse(value))) throw new UsageError(`${name} must be a time such as 2026-03-02 or 2026-03-02T09:00:00Z, not "${value}"`);
      }
      const from = opts.from ? new Date(opts.from).toISOString() : '';
      const to = opts.to ? new Date(opts.to).toISOString() : '\uffff';
      await withStore(opts, async (store) => {
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
