/**
 * Workbooks that attack, through the built command line (`npm run build`):
 * `validate` refuses each in one line with its bad-file exit code, its peak
 * memory measured (the process's own getrusage, written as it exits) far under
 * what inflating the part would take; `run` puts each aside in failed/ with its
 * report, nothing sent. The bombs are a gigabyte each, a megabyte packed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finished } from '../helpers/cli.js';
import { BIN, runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE } from '../helpers/engine.js';
import { validRow } from '../helpers/rows.js';
import type { Attack } from '../helpers/xlsx-bomb.js';
import { writeAttackWorkbook } from '../helpers/xlsx-bomb.js';

const GIB = 1024 * 1024 * 1024;
/** A generous ceiling: node alone takes about 50 MB; inflating any of these parts, gigabytes (1.48 GB measured for the shared strings). */
const MAX_PEAK_MB = 300;

const BOMBS: Record<string, { attack: Attack; message: RegExp }> = {
  'shared-strings.xlsx': {
    attack: { pad: { part: 'sharedStrings', bytes: GIB } },
    message: /xl\/sharedStrings\.xml unpacks to 10737\d{5} bytes from \d+ \(\d+ times its packed size; the limit is 50 times: batch\.max_compression_ratio\)/,
  },
  'padded-sheet.xlsx': {
    attack: { pad: { part: 'sheet', bytes: GIB } },
    message: /xl\/worksheets\/sheet1\.xml unpacks to 10737\d{5} bytes from \d+ \(\d+ times its packed size/,
  },
  'lying-directory.xlsx': {
    attack: { pad: { part: 'sharedStrings', bytes: GIB }, declare: { part: 'sharedStrings', bytes: 2000 } },
    message: /xl\/sharedStrings\.xml unpacks to more than the 2000 bytes the archive's directory declares for it \(the directory lies\)/,
  },
};

const dir = mkdtempSync(join(tmpdir(), 'paybatch-xlsx-bomb-cli-'));
const rows = [validRow('gbr', { external_id: 'BOMB-1' })];
const env = { PAYBATCH_HOME: join(dir, 'ws'), PAYBATCH_BASE_URL: '', PAYBATCH_API_KEY: '', PAYBATCH_API_SECRET: '', PAYBATCH_API_SECRET_FILE: '' };

/** Runs `paybatch validate FILE` with a preloaded module that writes the process's peak RSS (MB) to a file as it exits. */
function validateMeasured(file: string): Promise<Finished & { peakMb: number }> {
  const rssFile = `${file}.rss`;
  const preload = join(dir, 'peak-rss.mjs');
  writeFileSync(preload, `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(${JSON.stringify(rssFile)}, String(Math.round(process.resourceUsage().maxRSS / 1024))));\n`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', preload, BIN, 'validate', file], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, peakMb: Number(readFileSync(rssFile, 'utf8')) }));
  });
}

describe('workbooks that attack, through the command line', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeAll(async () => {
    for (const [name, { attack }] of Object.entries(BOMBS)) await writeAttackWorkbook(join(dir, name), rows, attack);
  }, 120_000);

  for (const [name, { message }] of Object.entries(BOMBS)) {
    it(`validate refuses ${name} in one line, exit 2, its peak memory far under what inflating it takes`, async () => {
      const file = join(dir, name);
      const result = await validateMeasured(file);
      console.log(`validate ${name}: exit ${result.code}, peak RSS ${result.peakMb} MB`);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`paybatch: ${file}: cannot be read as a batch (part_too_large): `);
      expect(lines[0]).toMatch(message);
      expect(result.peakMb).toBeLessThan(MAX_PEAK_MB);
    }, 60_000);
  }

  it('run puts every one aside in failed/ with its report naming the part, nothing sent', async () => {
    const home = env.PAYBATCH_HOME;
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    for (const name of Object.keys(BOMBS)) {
      writeFileSync(join(home, 'inbox', name), readFileSync(join(dir, name)));
      writeFileSync(join(home, 'inbox', `${name}.done`), '');
    }
    const run = await runCli(['run', '--wait', '5s'], { env });
    expect(run.code, run.stderr).toBe(0);
    const failed = readdirSync(join(home, 'failed'));
    for (const [name, { message }] of Object.entries(BOMBS)) {
      expect(failed.filter((file) => file.endsWith(`--${name}`)), name).toHaveLength(1);
      const report = readFileSync(join(home, 'failed', failed.find((file) => file.endsWith(`--${name}.report.txt`)) as string), 'utf8');
      expect(report).toMatch(new RegExp(`^${name.replace('.', '\\.')}: cannot be read as a batch \\(part_too_large\\): ${message.source}`));
      expect(report).toMatch(/Nothing of it was sent/);
    }
    expect(readdirSync(join(home, 'inbox'))).toEqual([]);
  }, 90_000);
});
