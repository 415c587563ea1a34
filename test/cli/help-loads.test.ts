/**
 * `paybatch --help` and each command's `--help` load commander and the
 * commands' definitions only: no database driver, web framework, HTTP client,
 * schema library or spreadsheet reader, which are loaded when a command runs
 * (dynamic imports in the action handlers). Told by the modules the built
 * binary loads, as a module loader hook records them (node --import), not by
 * timing it. A command that runs loads what it needs: the hook sees it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers/cli.js';
import { COMMANDS } from '../../src/cli/program.js';

/** What a command needs when it runs, never for its help. */
const HEAVY = ['better-sqlite3', 'pg', 'fastify', '@fastify/static', 'undici', 'zod', 'exceljs', 'libphonenumber-js', 'pino', 'prom-client', 'chokidar', 'nodemailer', 'csv-parse'];
const DEMO = fileURLToPath(new URL('../../fixtures/demo-batch.csv', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'paybatch-help-loads-'));
const hooks = join(dir, 'hooks.mjs');
const register = join(dir, 'register.mjs');
writeFileSync(hooks, 'export async function load(url, context, next) { process.stderr.write(`loaded ${url}\\n`); return next(url, context); }\n');
writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);

/** The packages of node_modules the binary loads for these arguments, as the hook saw them. */
async function packagesLoaded(args: string[]): Promise<{ code: number | null; packages: Set<string> }> {
  await runCli(['--version']); // the binary is built (runCli says so when it is not)
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(register).href, BIN, ...args], { env: { ...process.env, PAYBATCH_HOME: join(dir, 'ws') } });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      const packages = new Set([...stderr.matchAll(/^loaded \S*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1] as string));
      resolve({ code, packages });
    });
  });
}

describe('help loads no more than the commands\' definitions', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('paybatch --help', { timeout: 30_000 }, async () => {
    const { code, packages } = await packagesLoaded(['--help']);
    expect(code).toBe(0);
    expect([...packages].filter((p) => HEAVY.includes(p))).toEqual([]);
    expect(packages.has('commander')).toBe(true);
  });

  it('each command\'s --help', { timeout: 120_000 }, async () => {
    for (const name of Object.keys(COMMANDS)) {
      const { code, packages } = await packagesLoaded([name, '--help']);
      expect(code, name).toBe(0);
      expect([...packages].filter((p) => HEAVY.includes(p)), `paybatch ${name} --help`).toEqual([]);
    }
  });

  it('a command that runs loads what it needs (the hook sees it)', { timeout: 30_000 }, async () => {
    const { code, packages } = await packagesLoaded(['validate', DEMO]);
    expect(code).toBe(1); // the demo batch has invalid rows on purpose
    expect(packages.has('zod')).toBe(true);
    expect(packages.has('libphonenumber-js')).toBe(true);
  });
});
