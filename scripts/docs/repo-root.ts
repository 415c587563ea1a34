/** The repository's root, from the source (scripts/) or the build (dist/scripts/) alike: the folder of package.json. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function repoPath(path: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith('dist')) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above scripts/');
    dir = up;
  }
  return join(dir, path);
}
