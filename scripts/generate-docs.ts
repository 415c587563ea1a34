/**
 * Writes the reference docs generated from the code: docs/cli.md (the
 * commands) and docs/configuration.md (the configuration schema). With
 * --check, writes nothing and exits 1 when a committed file differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cliReference } from './docs/cli-reference.js';
import { configReference } from './docs/config-reference.js';
import { repoPath } from './docs/repo-root.js';

/** Each generated file by its path in the repository, with its content now. */
export async function generatedDocs(): Promise<Record<string, string>> {
  return { 'docs/cli.md': `${await cliReference()}\n`, 'docs/configuration.md': `${configReference()}\n` };
}


if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [path, content] of Object.entries(await generatedDocs())) {
    const now = (() => {
      try {
        return readFileSync(repoPath(path), 'utf8');
      } catch {
        return null;
      }
    })();
    if (now === content) continue;
    if (check) {
      stale += 1;
      process.stderr.write(`${path} differs from what the code generates: run npm run docs\n`);
    } else {
      writeFileSync(repoPath(path), content);
      process.stdout.write(`wrote ${path}\n`);
    }
  }
  process.exitCode = stale > 0 ? 1 : 0;
}
