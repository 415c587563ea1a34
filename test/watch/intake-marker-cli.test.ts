/**
 * What a completion marker means, against a real `paybatch watch` child process
 * of the built binary, a real sandbox over HTTP and a real SQLite file: a marker
 * written while the file ends in the middle of an amount, or before the file,
 * makes nothing complete (987.65 is never paid as 98.00, no row is lost); a file
 * written to after it was taken is caught when archived (its added rows held, a
 * note and a log line); a marker goes to failed/ with a refused link; a file
 * whose name holds a newline is refused and named escaped. Waits are for events
 * (an intake in the audit trail, a payout at the sandbox, a file appearing).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN } from '../helpers/cli.js';
import { eventually } from '../helpers/daemon.js';
import { FAST_ENGINE, FAST_SANDBOX, template } from '../helpers/engine.js';

// Long enough that the writer goes on well within it (a file cut short is taken by stability after four times as long).
const STABLE_MS = 1000;
const [HEADER, FIRST] = readFileSync(template('templates/gbr-bank.csv'), 'utf8').split('\n') as [string, string];

/** `count` GBR rows with external ids PREFIX-1...; the tenth pays 987.65 GBP. */
function rows(prefix: string, count: number, from = 1): string {
  const fields = FIRST.split(',');
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    return `${[`${prefix}-${n}`, ...fields.slice(1, 4), n === 10 ? '987.65' : `${100 + n}.00`, ...fields.slice(5)].join(',')}\n`;
  }).join('');
}

describe('paybatch watch and completion markers, as a process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-marker-cli-'));
  const home = join(dir, 'ws');
  const inbox = join(home, 'inbox');
  let sandbox: RunningSandbox;
  let child: ChildProcess;
  let stderr = '';

  /** External id to amount paid (minor units), for ids starting with `prefix`. */
  const paid = (prefix: string): Map<string, string> =>
    new Map([...sandbox.store.allTransactions()].filter((t) => t.external_id.startsWith(`${prefix}-`)).map((t) => [t.external_id, t.output_amount]));
  /** How many times the daemon looked at `name` (every look is in the audit trail, a first one included). */
  const looks = (name: string): number => {
    const db = new Database(join(home, 'paybatch.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare("SELECT COUNT(*) FROM audit_log WHERE subject = ? AND action LIKE 'intake_%'").pluck().get(name) as number;
    } finally {
      db.close();
    }
  };
  const folder = (name: string): string[] => readdirSync(join(home, name));

  beforeAll(async () => {
    // Payouts take a second or two, so that a batch is still open when its file is written to after its release.
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, delay_ms: [1000, 2000] } } });
    openWorkspace(home);
    // Its files pay the same recipient the same amounts under other prefixes on purpose: not held as possible duplicates.
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ engine: FAST_ENGINE, batch: { duplicate_window: 'off' }, watch: { stable_ms: STABLE_MS, results_every_ms: 500, listen: { port: 0 } } }));
    child = spawn(process.execPath, [BIN, 'watch'], { env: { ...process.env, PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret } });
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout?.resume();
    await eventually(() => /webhooks received at/.test(stderr), 20_000, `watch started (${stderr})`);
  }, 40_000);
  afterAll(async () => {
    const exited = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGINT');
    await exited;
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a marker written while the file ends in the middle of an amount: 987.65 is never paid as 98.00, the rows written after are paid', { timeout: 60_000 }, async () => {
    const whole = `${HEADER}\n${rows('CUT', 15)}`;
    const cut = whole.indexOf('987.65') + 2;
    const file = join(inbox, 'cut.csv');
    // Written under a hidden name, its marker beside it, then renamed in: every look of the daemon sees both.
    const fd = openSync(join(inbox, '.cut.csv.part'), 'w');
    writeSync(fd, whole.slice(0, cut));
    writeFileSync(`${file}.done`, '');
    renameSync(join(inbox, '.cut.csv.part'), file);
    // The daemon has looked at it with its marker (an intake outcome in the audit trail) before the writer goes on.
    await eventually(() => looks('cut.csv') >= 1, 20_000, 'the cut file looked at');
    writeSync(fd, whole.slice(cut));
    closeSync(fd);
    await eventually(() => paid('CUT').size === 15 && folder('archive').some((f) => f.endsWith('--cut.csv')), 40_000, 'the whole file paid and archived');
    expect(paid('CUT').get('CUT-10')).toBe('98765');
    expect([...paid('CUT').values()]).not.toContain('9800');
    expect(folder('inbox')).toEqual([]);
  });

  it('a marker older than the file (written before it) is ignored: the file is taken whole by stability, no row lost', { timeout: 60_000 }, async () => {
    const file = join(inbox, 'early.csv');
    writeFileSync(`${file}.done`, '');
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(`${file}.done`, minuteAgo, minuteAgo);
    const fd = openSync(join(inbox, '.early.csv.part'), 'w');
    writeSync(fd, `${HEADER}\n${rows('EARLY', 3)}`);
    renameSync(join(inbox, '.early.csv.part'), file);
    await eventually(() => looks('early.csv') >= 1, 20_000, 'the first rows looked at');
    writeSync(fd, rows('EARLY', 5, 4));
    closeSync(fd);
    await eventually(() => paid('EARLY').size === 8 && folder('archive').some((f) => f.endsWith('--early.csv')), 40_000, 'all eight rows paid');
    expect(folder('archive').filter((f) => f.endsWith('--early.csv'))).toHaveLength(1);
  });

  it('a file written to after it was taken and released: its SHA-256 differs at the archive, the added rows are held (not paid), with a note and a log line', { timeout: 60_000 }, async () => {
    const file = join(inbox, 'grown.csv');
    const fd = openSync(file, 'w');
    writeSync(fd, `${HEADER}\n${rows('GROWN', 6)}`);
    writeFileSync(`${file}.done`, '');
    // Released and being paid: the writer, still holding the file open, adds rows to it (now in processing/).
    await eventually(() => paid('GROWN').size > 0, 30_000, 'the first payout');
    writeSync(fd, rows('GROWN', 4, 7));
    closeSync(fd);
    const held = await eventually(() => folder('archive').find((f) => f.endsWith('--grown.csv.unsent.csv')), 40_000, 'the added rows held');
    expect(readFileSync(join(home, 'archive', held), 'utf8')).toBe(`${HEADER}\n${rows('GROWN', 4, 7)}`);
    // The note is written after the rows held: waited for too (under load, a look between the two found no note).
    const noteFile = await eventually(() => folder('archive').find((f) => f.endsWith('--grown.csv.changed.txt')), 10_000, 'the note beside them');
    const note = readFileSync(join(home, 'archive', noteFile), 'utf8');
    expect(note).toMatch(/4 line\(s\) were added after it was taken; they were not paid, and are held in .*grown\.csv\.unsent\.csv/);
    await eventually(() => /archived file changed: batch \S+, file grown\.csv, .*held /.test(stderr), 10_000, 'the log line');
    expect([...paid('GROWN').keys()].sort()).toEqual(['GROWN-1', 'GROWN-2', 'GROWN-3', 'GROWN-4', 'GROWN-5', 'GROWN-6']);
  });

  it('a marker goes with its file refused to failed/ (a link to a file outside): none is left in the inbox', { timeout: 30_000 }, async () => {
    mkdirSync(join(dir, 'etc'));
    writeFileSync(join(dir, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    // The marker first: a link is refused at its first look, so a marker written after it could come too late to go
    // with it (under load, the daemon looked between the two). A link takes any marker of its name, whatever its age.
    writeFileSync(join(inbox, 'passwd.csv.done'), '');
    symlinkSync(join(dir, 'etc', 'passwd'), join(inbox, 'passwd.csv'));
    await eventually(() => folder('failed').some((f) => f.endsWith('--passwd.csv.report.txt')), 20_000, 'the link refused');
    await eventually(() => folder('inbox').length === 0, 5_000, 'the inbox emptied');
    expect(folder('failed').filter((f) => f.endsWith('--passwd.csv.done'))).toHaveLength(1);
  });

  it('a file whose name holds a newline is refused, not paid, moved aside and named escaped', { timeout: 30_000 }, async () => {
    writeFileSync(join(inbox, 'pay\nroll.csv'), `${HEADER}\n${rows('NL', 3)}`);
    await eventually(() => folder('failed').some((f) => f.endsWith('--pay_roll.csv.report.txt')), 20_000, 'the file refused');
    await eventually(() => stderr.includes('pay\\nroll.csv'), 5_000, 'the name printed escaped');
    expect(stderr).not.toContain('pay\nroll');
    expect(folder('inbox')).toEqual([]);
    expect(paid('NL').size).toBe(0);
  });
});
