/**
 * One paybatch at a time in a workspace: a lock file holding the process id.
 * A lock left by a process that no longer runs (killed with SIGKILL) is taken
 * over; a live one stops the second run with a clear message.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PaybatchError, ExitCode } from '../errors.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockWorkspace(home: string): () => void {
  const file = join(home, 'paybatch.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) {
        throw new PaybatchError(`another paybatch (process ${holder}) is working in ${home}; wait for it to finish`, ExitCode.failure);
      }
      unlinkSync(file); // left by a process that died: take it over
    }
  }
  throw new PaybatchError(`cannot lock the workspace ${home}`, ExitCode.failure);
}
