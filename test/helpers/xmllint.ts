/**
 * Schema validation with xmllint (Debian's libxml2-utils) against the official
 * ISO 20022 XSDs in test/fixtures/iso20022/ (their source is in the README
 * beside them). Where xmllint is not installed the schema tests are skipped
 * with one visible line, except under CI=true, where they fail (.ci/run
 * installs it), as test/helpers/browser.ts does for Chromium.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { requireTier } from '../tiers.js';

export type IsoSchema = 'pain.001.001.03' | 'pain.001.001.09' | 'pain.002.001.03' | 'pain.002.001.10';

export const schemaPath = (schema: IsoSchema): string => fileURLToPath(new URL(`../fixtures/iso20022/${schema}.xsd`, import.meta.url));

/** The path of xmllint, or null after saying why the schema tests are skipped (throws under CI=true). */
export function xmllintAvailable(what: string): string | null {
  try {
    const path = execFileSync('sh', ['-c', 'command -v xmllint'], { encoding: 'utf8' }).trim();
    if (path) return path;
  } catch {
    // not installed
  }
  if (process.env.CI === 'true') throw new Error(`${what} needs xmllint, and CI=true: install it (apt-get install -y libxml2-utils), as .ci/run does`);
  process.stdout.write(`skipped: ${what}: xmllint is not installed (apt-get install -y libxml2-utils)\n`);
  return null;
}

/** xmllint's verdict on a file against an ISO schema: valid, and what it said (the errors, with their lines). */
export function validateAgainst(xmllint: string, schema: IsoSchema, file: string): { valid: boolean; output: string } {
  requireTier('xmllint', ['system']);
  const run = spawnSync(xmllint, ['--noout', '--nonet', '--schema', schemaPath(schema), file], { encoding: 'utf8' });
  if (run.error) throw run.error;
  return { valid: run.status === 0, output: `${run.stdout}${run.stderr}`.trim() };
}
