/**
 * The exit codes each command can give, in one table: its help lists them and
 * docs/cli.md is generated from them. Codes and their constants are in
 * src/errors.ts (sysexits(3)); `validate` has three of its own, for scripts
 * that ask "is this file good" (src/cli/validate-command.ts).
 */
import { ExitCode } from '../errors.js';

/** What each exit code means, as the top-level handler and the commands use them. */
export const EXIT_MEANINGS: Readonly<Record<number, string>> = {
  [ExitCode.ok]: 'done',
  [ExitCode.failure]: 'the command could not do what was asked (said in one line)',
  [ExitCode.attention]: 'done, but a person must look (rows that need attention, a reconciliation with differences or incomplete)',
  [ExitCode.usage]: 'the command line is wrong (one line, and where to see the help)',
  [ExitCode.dataError]: 'the input or the state database cannot be used (a database newer than this paybatch or damaged, a statement that cannot be read)',
  [ExitCode.unavailable]: 'the payout service did not answer; nothing is lost, run again',
  [ExitCode.software]: 'a bug in paybatch (please report it)',
  [ExitCode.cantCreate]: 'a path paybatch would use is a link, outside the workspace, or cannot be made',
  [ExitCode.ioError]: 'the disk is full or cannot be written',
  [ExitCode.tempFail]: 'another paybatch took the workspace over, or the database could not be reached within the lease: run again later',
  [ExitCode.noPermission]: 'permission denied (a file, or the service refused the credentials)',
  [ExitCode.config]: 'the configuration is wrong (the file and the key are named)',
  [ExitCode.interrupted]: '`run` stopped by Ctrl-C (SIGINT): what it stopped and what is in flight are said; the next run resumes',
};

/** `validate`'s own: a script asks whether the file is good without reading the report. */
const VALIDATE_MEANINGS: Readonly<Record<number, string>> = {
  0: 'every row is valid',
  1: 'some rows are invalid (each named by line and column)',
  2: 'the file cannot be read as a batch',
};

type Code = (typeof ExitCode)[keyof typeof ExitCode];
const { ok, failure, attention, usage, dataError, unavailable, software, cantCreate, ioError, tempFail, noPermission, config, interrupted } = ExitCode;

/** Any command: parsing, a path it was given, the disk, a bug. */
const ALWAYS: readonly Code[] = [ok, usage, software, cantCreate, ioError, noPermission];
/** A command that reads the configuration and the state database (SQLite, or PostgreSQL shared by workers). */
const STORE: readonly Code[] = [...ALWAYS, failure, config, dataError, tempFail];
/** ... and talks to the payout service. */
const SERVICE: readonly Code[] = [...STORE, unavailable];

/** The codes each command can end with, by its path after `paybatch`. */
const CODES: Readonly<Record<string, readonly Code[]>> = {
  run: [...SERVICE, attention, interrupted],
  watch: SERVICE,
  validate: [...ALWAYS, config],
  preview: SERVICE,
  demo: [...ALWAYS, unavailable],
  status: STORE,
  console: STORE,
  'console login': STORE,
  approve: STORE,
  allow: STORE,
  reject: STORE,
  keys: [ok, usage],
  'keys generate': [...ALWAYS, failure],
  'keys sign': [...ALWAYS, failure, dataError],
  report: [...SERVICE, attention],
  audit: [ok, usage],
  'audit verify': STORE,
  'audit export': STORE,
  cancel: SERVICE,
  corrections: STORE,
  retry: STORE,
  resubmit: STORE,
  sandbox: [...ALWAYS, config],
  backup: [...ALWAYS, failure, config],
  webhooks: [ok, usage],
  'webhooks sync': SERVICE,
  'webhooks list': SERVICE,
  completion: [ok, usage],
};

/** The exit codes of a command (its path after `paybatch`), each with its meaning, in order. */
export function exitCodesOf(path: string): Array<{ code: number; meaning: string }> {
  const codes = CODES[path];
  if (!codes) throw new Error(`no exit codes listed for paybatch ${path} (src/cli/exit-codes.ts)`);
  const own = path === 'validate' ? VALIDATE_MEANINGS : {};
  const all = new Set<number>([...Object.keys(own).map(Number), ...codes]);
  return [...all].sort((a, b) => a - b).map((code) => ({ code, meaning: own[code] ?? EXIT_MEANINGS[code] ?? '' }));
}

/** The "Exit codes:" section of a command's help. */
export function exitCodesHelp(path: string): string {
  return `\nExit codes:\n${exitCodesOf(path).map(({ code, meaning }) => `  ${String(code).padEnd(4)}${meaning}\n`).join('')}`;
}
