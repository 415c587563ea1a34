/** `paybatch keys generate NAME [--dir DIR]`: an Ed25519 key pair for an approver; the private half stays with them. */
import { constants, mkdirSync, openSync, writeSync, closeSync } from 'node:fs';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { generateKeys, privateKeyFrom, signBytes } from '../approvals/keys.js';
import type { Statement } from '../approvals/statement.js';
import { parseStatement, statementBytes } from '../approvals/statement.js';
import { ExitCode, PaybatchError } from '../errors.js';
import { JSON_FLAG } from './json-flag.js';
import { withWorkspace } from './workspace-options.js';
import { formatMoneyAndMinor } from '../validate/money.js';

function writeNew(path: string, text: string, mode: number): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new PaybatchError(`${path} already exists: keys are never overwritten`, ExitCode.failure);
    throw error;
  }
  writeSync(fd, text);
  closeSync(fd);
}

export function keysCommand(): Command {
  const keys = new Command('keys').description('Key pairs for the people who approve batches.');
  keys.addCommand(withWorkspace(new Command('generate'), { config: false, home: 'the workspace the key must stay out of (default: $PAYBATCH_HOME or ./paybatch-data)' })
    .description('Write NAME.key (private, readable by you only: keep it off the paybatch machine) and NAME.pub (public: goes in the approval policy).')
    .argument('<name>', 'the person, as named in approvals.people')
    .option('--dir <dir>', 'where to write the two files (not inside a paybatch workspace)', '.')
    .option(...JSON_FLAG)
    .action(async (name: string, opts: { dir: string; home?: string; json?: boolean }) => {
      const { printJson } = await import('./json-output.js');
      if (!/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(name)) throw new PaybatchError('a name of letters, digits, dots, dashes and underscores', ExitCode.usage);
      // Loaded when the command runs, not for --help (docs/performance.md).
      const { workspaceHome } = await import('../config/config.js');
      const dir = resolve(opts.dir);
      const within = relative(resolve(workspaceHome(opts.home)), dir);
      if (within === '' || (!within.startsWith('..') && !isAbsolute(within))) throw new PaybatchError(`${dir} is inside the paybatch workspace: a private key never goes there (give --dir elsewhere)`, ExitCode.failure);
      // A folder named but not there yet is what the person meant to have: made private (0700), as a key's home should be.
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const { privatePem, publicPem } = generateKeys();
      const privatePath = join(dir, `${name}.key`);
      const publicPath = join(dir, `${name}.pub`);
      writeNew(privatePath, privatePem, 0o600);
      writeNew(publicPath, publicPem, 0o644);
      if (opts.json) {
        printJson('keys generate', { name, private_key_file: privatePath, public_key_file: publicPath, public_key: publicPem });
        return;
      }
      process.stdout.write(`private key ${privatePath} (keep it to yourself: it signs approvals)\npublic key  ${publicPath}\n\nIn paybatch.config.json:\n${JSON.stringify({ approvals: { people: { [name]: { role: 'approver', public_key: publicPem } } } }, null, 2)}\n`);
    }));
  keys.addCommand(new Command('sign')
    .description('Sign an approval statement (downloaded from the console) with your private key; prints the signature to paste back. Nothing is sent anywhere.')
    .argument('<statement>', 'the statement file (JSON)')
    .requiredOption('--key <file>', 'your private key (from paybatch keys generate)')
    .action((statementFile: string, opts: { key: string }) => {
      const statement = readStatement(statementFile);
      const key = privateKeyFrom(readText(opts.key, 'the key file'));
      if (typeof key === 'string') throw new PaybatchError(`${opts.key}: ${key}`, ExitCode.failure);
      const totals = Object.entries(statement.totals).map(([c, v]) => formatMoneyAndMinor(v, c)).join(', ');
      const ceiling = Object.entries(statement.ceiling).map(([c, v]) => formatMoneyAndMinor(v, c)).join(', ');
      process.stderr.write(`signing: batch ${statement.batch}, ${statement.rows} rows, totals ${totals}, funding at most ${ceiling}, until ${statement.expires_at}\n`);
      process.stdout.write(`${signBytes(key, statementBytes(statement))}\n`);
    }));
  return keys;
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new PaybatchError(`cannot read ${what} ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, ExitCode.failure);
  }
}

function readStatement(file: string): Statement {
  const text = readText(file, 'the statement');
  const statement = parseStatement(text);
  if (typeof statement === 'string') throw new PaybatchError(`${file}: ${statement}`, ExitCode.dataError);
  return statement;
}
