/**
 * Where a worker thread's module is: beside the module starting it once built;
 * from the build when that module runs from its TypeScript source (tests), as
 * a worker thread cannot load TypeScript.
 */
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `from`: the starting module's import.meta.url; `name`: the worker's file, built (`check-worker.js`). */
export function workerScript(from: string, name: string): string {
  const here = fileURLToPath(from);
  if (!here.endsWith('.ts')) return join(dirname(here), name);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const built = join(root, 'dist', relative(root, dirname(here)), name);
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build`);
  return built;
}
