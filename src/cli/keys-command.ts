/** `paybatch keys generate NAME [--dir DIR]`: an Ed25519 key pair for an approver; the private half stays with them. */
import { constants, openSync, writeSync, closeSync } from 'node:fs';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { Command } from 'commander';
import { generateKeys } from '../approvals/keys.js';
import { workspaceHome } from '../config/config.js';
import { ExitCode, PaybatchError } from '../errors.js';

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
  keys.addCommand(new Command('generate')
    .description('Write NAME.key (private, readable by you only: keep it off the paybatch machine) and NAME.pub (public: goes in the approval policy).')
    .argument('<name>', 'the person, as named in approvals.people')
    .option('--dir <dir>', 'where to write the two files (not inside a paybatch workspace)', '.')
    .option('--home <dir>', 'the workspace the key must stay out of (default: $PAYBATCH_HOME or ./paybatch-data)')
    .action((name: string, opts: { dir: string; home?: string }) => {
      if (!/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(name)) throw new PaybatchError('a name of letters, digits, dots, dashes and underscores', ExitCode.usage);
      const dir = resolve(opts.dir);
      const within = relative(resolve(workspaceHome(opts.home)), dir);
      if (within === '' || (!within.startsWith('..') && !isAbsolute(within))) throw new PaybatchError(`${dir} is inside the paybatch workspace: a private key never goes there (give --dir elsewhere)`, ExitCode.failure);
      const { privatePem, publicPem } = generateKeys();
      const privatePath = join(dir, `${name}.key`);
      const publicPath = join(dir, `${name}.pub`);
      writeNew(privatePath, privatePem, 0o600);
      writeNew(publicPath, publicPem, 0o644);
      process.stdout.write(`private key ${privatePath} (keep it to yourself: it signs approvals)\npublic key  ${publicPath}\n\nIn paybatch.config.json:\n${JSON.stringify({ approvals: { people: { [name]: { role: 'approver', public_key: publicPem } } } }, null, 2)}\n`);
    }));
  return keys;
}
