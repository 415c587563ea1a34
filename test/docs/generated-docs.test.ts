/**
 * The reference generated from the code cannot drift: docs/cli.md and
 * docs/configuration.md must be exactly what `npm run docs` writes now.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../../scripts/docs/repo-root.js';
import { generatedDocs } from '../../scripts/generate-docs.js';

describe('the generated reference docs', () => {
  it('are as the code generates them (run npm run docs after changing a command or a configuration key)', async () => {
    for (const [path, content] of Object.entries(await generatedDocs())) {
      expect(readFileSync(repoPath(path), 'utf8'), `${path} is stale: run npm run docs`).toBe(content);
    }
  });

  it('describe every command and every configuration section', async () => {
    const docs = await generatedDocs();
    for (const command of ['run', 'watch', 'validate', 'preview', 'approve', 'report', 'sandbox']) expect(docs['docs/cli.md']).toContain(`## \`paybatch ${command}`);
    for (const section of ['batch', 'intake', 'service', 'engine', 'watch', 'reports', 'approvals', 'store', 'console', 'notifications']) expect(docs['docs/configuration.md']).toContain(`## \`${section}\``);
    expect(docs['docs/configuration.md']).toContain('| `batch.max_row_characters` | integer (> 0) | `65536` | Characters in the fields of one row');
  });
});
