/**
 * The CLI's conventions, on the built binary: the batch as an argument (with
 * --batch still accepted), --json on each command that reports something
 * (parsed, and checked against its documented shape), --home and --config for
 * the whole program (PAYBATCH_HOME and PAYBATCH_CONFIG too), a wrong command
 * line in one line and a hint, exit codes in every command's help, and the
 * shell completion scripts.
 */
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonCommand } from '../../src/cli/json-output.js';
import { JSON_SHAPES } from '../../src/cli/json-output.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import type { Finished } from '../helpers/cli.js';
import { BIN, runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, template } from '../helpers/engine.js';

/** The document a command printed with --json: one JSON value on standard output, of its documented shape. */
function documentOf<C extends JsonCommand>(command: C, result: Finished): ReturnType<(typeof JSON_SHAPES)[C]['parse']> {
  const parsed: unknown = JSON.parse(result.stdout);
  return JSON_SHAPES[command].parse(parsed) as ReturnType<(typeof JSON_SHAPES)[C]['parse']>;
}

describe('the CLI\'s conventions, on the built binary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-cli-conventions-'));
  const home = join(dir, 'ws');
  const configFile = join(dir, 'elsewhere.json');
  let sandbox: RunningSandbox;
  let service: NodeJS.ProcessEnv;
  let batch = '';
  beforeAll(async () => {
    // No euro to fund with: euro rows end unpaid (insufficient_funds), which `retry` pays again as they are.
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, balances: { USD: '100000000000', EUR: '0', GBP: '10000000000' } } });
    service = { PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
    // The configuration is not in the workspace: only --config (or PAYBATCH_CONFIG) finds it.
    writeFileSync(configFile, JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('run --json, with --home and --config given before the command: one document of its shape, exit 3 for rows that need a person', { timeout: 60_000 }, async () => {
    mkdirSync(join(home, 'inbox'), { recursive: true });
    copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'eur.csv'));
    const result = await runCli(['--home', home, '--config', configFile, 'run', '--wait', '5s', '--json'], { env: service });
    expect(result.code, result.stderr).toBe(3);
    const run = documentOf('run', result);
    expect(run.intake).toEqual([{ kind: 'accepted', file: expect.stringMatching(/--eur\.csv$/), batch: run.batches[0]?.batch, reason: null, report_file: null }]);
    expect(run.batches).toHaveLength(1);
    const summary = run.batches[0] as (typeof run.batches)[number];
    expect(summary).toMatchObject({ file: 'eur.csv', rows: 3, need_person: 3, by_reason: { insufficient_funds: 3 }, unsettled: 0 });
    expect(run.service_trouble).toBeNull();
    batch = summary.batch;
    expect(existsSync(join(home, 'paybatch.db'))).toBe(true);
  });

  it('--home and --config: before the command or after it (after wins), PAYBATCH_HOME and PAYBATCH_CONFIG as defaults; refused on a command without a workspace', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ engine: { concurrency: 'many' } }));
    const byFlag = await runCli(['--config', bad, 'status', '--home', home], { env: service });
    expect(byFlag.code).toBe(78);
    expect(byFlag.stderr).toContain(bad);
    const byEnvironment = await runCli(['status', '--home', home], { env: { ...service, PAYBATCH_CONFIG: bad } });
    expect(byEnvironment.code).toBe(78);
    expect(byEnvironment.stderr).toContain(bad);
    const flagBeatsEnvironment = await runCli(['status', '--json', '--config', configFile], { env: { ...service, PAYBATCH_HOME: home, PAYBATCH_CONFIG: bad } });
    expect(flagBeatsEnvironment.code, flagBeatsEnvironment.stderr).toBe(0);
    expect(JSON.parse(flagBeatsEnvironment.stdout).batches[0].batch).toBe(batch);
    // After the command's name wins over before it.
    const nearer = await runCli(['--home', join(dir, 'nowhere'), 'status', batch, '--home', home], { env: service });
    expect(nearer.code, nearer.stderr).toBe(0);
    const missing = await runCli(['--home', join(dir, 'nowhere'), 'status'], { env: service });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(join(dir, 'nowhere'));
    const notHere = await runCli(['--home', home, 'sandbox'], { env: service });
    expect(notHere.code).toBe(64);
    expect(notHere.stderr).toBe('error: option \'--home\' does not apply to \'paybatch sandbox\'\nsee \'paybatch sandbox --help\'\n');
  });

  it('the batch is an argument of cancel and report, --batch still accepted; cancel --json names each row', { timeout: 60_000 }, async () => {
    const env = { ...service, PAYBATCH_HOME: home, PAYBATCH_CONFIG: configFile };
    const named = ['--external-id', 'EUR-2026-0001,EUR-2026-0002,EUR-2026-0003', '--json', '--wait', '1s'];
    const byArgument = await runCli(['cancel', batch, ...named], { env });
    // Rows ended unpaid cannot be cancelled: nothing cancelled is exit 1, and the document says why for each.
    expect(byArgument.code, byArgument.stderr).toBe(1);
    const cancel = documentOf('cancel', byArgument);
    expect(cancel.batch).toBe(batch);
    expect(cancel.rows.map((r) => [r.external_id, r.cancelled])).toEqual([['EUR-2026-0001', false], ['EUR-2026-0002', false], ['EUR-2026-0003', false]]);
    expect(cancel.rows.every((r) => /already final/.test(r.reason))).toBe(true);
    const byOption = await runCli(['cancel', '--batch', batch, ...named], { env });
    expect(byOption.code).toBe(1);
    expect(documentOf('cancel', byOption).rows).toHaveLength(3);
    const twice = await runCli(['cancel', batch, '--batch', 'B00000000-other'], { env });
    expect(twice.code).toBe(64);
    expect(twice.stderr).toMatch(/^error: the batch is given twice .*\nsee 'paybatch cancel --help'\n$/);
    const neither = await runCli(['cancel'], { env });
    expect(neither.code).toBe(64);
    expect(neither.stderr).toBe('error: missing required argument \'batch\'\nsee \'paybatch cancel --help\'\n');

    const report = await runCli(['report', batch], { env });
    const reportOld = await runCli(['report', '--batch', batch], { env });
    expect(report.stderr).not.toMatch(/error:/);
    expect([report.code, reportOld.code]).toEqual([reportOld.code, report.code]);
    expect(report.stdout).toContain(`reconciliation-${batch}`);
    expect(reportOld.stdout).toContain(`reconciliation-${batch}`);
  });

  it('retry, resubmit, audit verify, backup and webhooks list --json: each one document of its shape', { timeout: 60_000 }, async () => {
    const env = { ...service, PAYBATCH_HOME: home, PAYBATCH_CONFIG: configFile };
    const retried = await runCli(['retry', batch, '--reason', 'insufficient_funds', '--json'], { env });
    expect(retried.code, retried.stderr).toBe(0);
    const retry = documentOf('retry', retried);
    expect(retry).toMatchObject({ batch, reasons: ['insufficient_funds'], rows: 3 });
    expect(existsSync(retry.file)).toBe(true);

    const fixed = join(dir, 'fixed.csv');
    writeFileSync(fixed, readFileSync(retry.file));
    const resubmitted = await runCli(['resubmit', fixed, '--json'], { env });
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    expect(documentOf('resubmit', resubmitted)).toEqual({ file: join(home, 'inbox', 'fixed.csv') });

    const verified = await runCli(['audit', 'verify', '--json'], { env });
    expect(verified.code, verified.stderr).toBe(0);
    const audit = documentOf('audit verify', verified);
    expect(audit).toMatchObject({ intact: true, broken: null, head_given: null });
    expect(audit.entries).toBeGreaterThan(0);
    const head = audit.head as { seq: number; hash: string };
    const withHead = documentOf('audit verify', await runCli(['audit', 'verify', '--json', '--head', `${head.seq}:${head.hash}`], { env }));
    expect(withHead.head_given).toEqual({ ...head, found: true });
    const wrongHead = await runCli(['audit', 'verify', '--json', '--head', `${head.seq}:${'0'.repeat(64)}`], { env });
    expect(wrongHead.code).toBe(1);
    expect(documentOf('audit verify', wrongHead)).toMatchObject({ intact: false, head_given: { found: false } });

    const copy = join(dir, 'backups', 'state.db');
    const backedUp = await runCli(['backup', copy, '--json'], { env });
    expect(backedUp.code, backedUp.stderr).toBe(0);
    const backup = documentOf('backup', backedUp);
    expect(backup).toMatchObject({ database: join(home, 'paybatch.db'), file: copy });
    expect(backup.bytes).toBe(readFileSync(copy).length);

    const synced = await runCli(['webhooks', 'sync', '--url', 'http://127.0.0.1:9/webhooks'], { env });
    expect(synced.code, synced.stderr).toBe(0);
    const listed = await runCli(['webhooks', 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const { webhooks } = documentOf('webhooks list', listed);
    expect(webhooks.length).toBeGreaterThan(0);
    expect(webhooks.every((w) => w.uri === 'http://127.0.0.1:9/webhooks')).toBe(true);
    expect(webhooks.map((w) => w.event_type)).toEqual([...webhooks.map((w) => w.event_type)].sort());
  });

  it('keys generate, approve and reject --json: each one document of its shape', { timeout: 60_000 }, async () => {
    const approvals = join(dir, 'approvals');
    const keys = join(dir, 'keys');
    const env = { ...service, PAYBATCH_HOME: approvals };
    const made: Record<string, string> = {};
    for (const name of ['ada', 'inbox']) {
      const generated = await runCli(['keys', 'generate', name, '--dir', keys, '--json'], { env });
      expect(generated.code, generated.stderr).toBe(0);
      const key = documentOf('keys generate', generated);
      expect(key).toMatchObject({ name, private_key_file: join(keys, `${name}.key`), public_key_file: join(keys, `${name}.pub`) });
      expect(key.public_key).toBe(readFileSync(key.public_key_file, 'utf8'));
      expect(generated.stdout).not.toContain('PRIVATE KEY');
      made[name] = key.public_key_file;
    }
    mkdirSync(join(approvals, 'inbox'), { recursive: true });
    writeFileSync(join(approvals, 'paybatch.config.json'), JSON.stringify({
      intake: FAST_INTAKE, engine: FAST_ENGINE,
      approvals: { enabled: true, inbox_submitter: 'inbox', people: { ada: { role: 'approver', public_key_file: made.ada }, inbox: { role: 'submitter', public_key_file: made.inbox } }, rules: [{ approvers: 1 }] },
    }));
    const batches: string[] = [];
    for (const name of ['first', 'second']) {
      // Other external ids in each: two batches, not the same file twice.
      writeFileSync(join(approvals, 'inbox', `${name}.csv`), readFileSync(template('templates/global-usd-bank.csv'), 'utf8').replace(/USD-2026-/g, `${name.toUpperCase()}-`));
      const run = documentOf('run', await runCli(['run', '--wait', '1s', '--json'], { env }));
      batches.push((run.batches.find((b) => b.file === `${name}.csv`) as { batch: string }).batch);
    }
    const [first, second] = batches as [string, string];
    const approved = await runCli(['approve', first, '--key', join(keys, 'ada.key'), '--as', 'ada', '--json'], { env });
    expect(approved.code, approved.stderr).toBe(0);
    const approval = documentOf('approve', approved);
    expect(approval).toMatchObject({ batch: first, approved_by: 'ada', verdict: { kind: 'approved', approvers: ['ada'] } });
    expect(Object.keys(approval.totals)).toEqual(['USD']);
    expect(approval.totals.USD).toMatch(/^\d+$/);
    const rejected = await runCli(['reject', second, '--reason', 'not this week', '--as', 'ada', '--json'], { env });
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(documentOf('reject', rejected)).toEqual({ batch: second, rejected_by: 'ada', reason: 'not this week' });
  });

  it('a wrong command line is one line and the hint, exit 64', async () => {
    const cases: Array<[string[], string]> = [
      [['run', '--wiat', '5s'], 'error: unknown option \'--wiat\' (Did you mean --wait?)\nsee \'paybatch run --help\'\n'],
      [['run', '--bogus'], 'error: unknown option \'--bogus\'\nsee \'paybatch run --help\'\n'],
      [['webhooks', 'list', '--jsn'], 'error: unknown option \'--jsn\' (Did you mean --json?)\nsee \'paybatch webhooks list --help\'\n'],
      [['stauts'], 'error: unknown command \'stauts\' (Did you mean status?)\nsee \'paybatch --help\'\n'],
      [['corrections'], 'error: missing required argument \'batch\'\nsee \'paybatch corrections --help\'\n'],
      [['completion', 'fish'], 'error: command-argument value \'fish\' is invalid for argument \'shell\'. Allowed choices are bash, zsh.\nsee \'paybatch completion --help\'\n'],
    ];
    for (const [args, stderr] of cases) {
      const result = await runCli(args, { env: { PAYBATCH_HOME: join(dir, 'unused') } });
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr, args.join(' ')).toBe(stderr);
      expect(result.stdout).toBe('');
    }
  });

  it('every command\'s help lists its exit codes; the program\'s groups the commands by task', { timeout: 60_000 }, async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    const groups = ['Paying:', 'Watching:', 'Approving:', 'Reconciling:', 'Correcting:', 'Operating:'].map((g) => top.stdout.indexOf(`\n${g}\n`));
    expect(groups.every((at) => at > 0)).toBe(true);
    expect(groups).toEqual([...groups].sort((a, b) => a - b));
    const paths = [
      'validate', 'preview', 'run', 'demo', 'status', 'watch', 'console', 'console login', 'approve', 'reject', 'keys generate', 'keys sign', 'report', 'audit verify', 'audit export',
      'cancel', 'corrections', 'retry', 'resubmit', 'backup', 'webhooks sync', 'webhooks list', 'sandbox', 'completion',
    ];
    for (const path of paths) {
      const help = await runCli([...path.split(' '), '--help']);
      expect(help.code, path).toBe(0);
      const codes = help.stdout.split('\nExit codes:\n')[1];
      expect(codes, `${path} --help`).toBeDefined();
      expect(codes, path).toMatch(/^ {2}0 {3}/);
      expect(codes, path).toMatch(/\n {2}64 {2}the command line is wrong/);
    }
    const run = (await runCli(['run', '--help'])).stdout;
    expect(run).toMatch(/\n {2}3 {3}done, but a person must look/);
    expect(run).toMatch(/\n {2}69 {2}the payout service did not answer/);
    expect((await runCli(['validate', '--help'])).stdout).toMatch(/\n {2}2 {3}the file cannot be read as a batch/);
  });

  it('paybatch completion bash: sourced, it completes commands, subcommands, options and --format\'s values; zsh has its script', async () => {
    const run = promisify(execFile);
    const script = `
      source <("${process.execPath}" "${BIN}" completion bash)
      complete -p paybatch
      t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _paybatch; echo "\${COMPREPLY[*]}"; }
      t paybatch re
      t paybatch --home /tmp report --format ''
      t paybatch keys ''
      t paybatch webhooks list --j
      t paybatch cancel --`;
    const { stdout } = await run('bash', ['-c', script]);
    expect(stdout.split('\n')).toEqual([
      'complete -F _paybatch paybatch',
      'reject report retry resubmit',
      'csv json xlsx pain002',
      'generate sign',
      '--json',
      '--home --config --batch --external-id --state --wait --as --yes --json --help',
      '',
    ]);
    const zsh = await runCli(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toMatch(/^#compdef paybatch\n/);
    expect(zsh.stdout).toContain('compdef _paybatch paybatch');
    expect(zsh.stdout).toContain('"report --format") echo "csv json xlsx pain002" ;;');
  });

  // Without zsh, skipped with vitest's one line; never under CI=true (.ci/run installs it), where its absence fails.
  it.skipIf(spawnSync('zsh', ['--version']).error !== undefined && process.env.CI !== 'true')('paybatch completion zsh: sourced after compinit, it completes as bash does (zsh filters by the prefix itself)', async () => {
    const script = `
      autoload -U compinit; compinit -u
      source <("${process.execPath}" "${BIN}" completion zsh)
      print -r -- "$_comps[paybatch]"
      compadd() { shift; print -r -- "$*"; }
      _files() { print -r -- "(files)"; }
      t() { words=("$@"); CURRENT=$#; _paybatch; }
      t paybatch --home /tmp report --format ''
      t paybatch keys ''
      t paybatch webhooks list --
      t paybatch backup ''`;
    const { stdout } = await promisify(execFile)('zsh', ['-f', '-c', script], { env: { ...process.env, HOME: dir } });
    expect(stdout.split('\n')).toEqual(['_paybatch', 'csv json xlsx pain002', 'generate sign', '--home --config --json -h --help', '(files)', '']);
  });
});
