/**
 * Loaded into a paybatch child with `--import` (NODE_OPTIONS): every read of
 * an intake scratch file fails as a failing disk's does (EIO), every other
 * file is read as always. A device that fails reads (device mapper's `error`
 * target, a faulty loop device) needs root; this does not.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const { openSync, readSync, closeSync } = fs;
const scratch = new Set();

fs.openSync = (path, ...rest) => {
  const fd = openSync(path, ...rest);
  if (String(path).includes('.paybatch-scratch-')) scratch.add(fd);
  return fd;
};
fs.readSync = (fd, ...rest) => {
  if (scratch.has(fd)) throw Object.assign(new Error('EIO: i/o error, read'), { errno: -5, code: 'EIO', syscall: 'read' });
  return readSync(fd, ...rest);
};
fs.closeSync = (fd) => {
  scratch.delete(fd);
  closeSync(fd);
};
// paybatch imports these by name (import { readSync } from 'node:fs'): those bindings follow only once synced.
syncBuiltinESMExports();
