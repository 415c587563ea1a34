/**
 * The short chaos runs, part of `npm test` so that CI runs them on every change:
 * the real script (`npm run chaos` runs the long one), a smaller batch and
 * fewer kills, the sandbox's payouts and paybatch's polling four times faster
 * (CHAOS_PACE); on SQLite with one worker, and on PostgreSQL with three workers
 * (one of them killed for good). Their seeds are printed, and CHAOS_SEED (with
 * CHAOS_PACE=4) replays them.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/postgres.js';

const SCRIPT = fileURLToPath(new URL('../../dist/chaos/run.js', import.meta.url));
const withPostgres = await postgresAvailable('the short chaos run on PostgreSQL');

async function chaos(args: string[]): Promise<{ code: number | null; output: string }> {
  expect(existsSync(SCRIPT), 'run `npm run build` first (npm test does)').toBe(true);
  const env = { ...process.env, CHAOS_ROWS: '200', CHAOS_KILLS: '6', CHAOS_SMALL_FILES: '1', CHAOS_PACE: '4' };
  const child = spawn(process.execPath, [SCRIPT, ...args], { env });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  process.stdout.write(output);
  return { code, output };
}

// The two runs share nothing (their own sandbox, workspaces and database) and spend most of their time waiting on the
// sandbox's payouts and on the workers' restarts: they run at once.
describe.concurrent('npm run chaos, short', () => {
  it('keeps every invariant through SIGKILLs under every fault at once', { timeout: 240_000 }, async () => {
    const { code, output } = await chaos([]);
    expect(code, output).toBe(0);
    expect(output).toMatch(/chaos: 6 SIGKILLs/);
    expect(output).toMatch(/all invariants hold/);
    expect(output).not.toMatch(/exited 70/);
  });

  it.skipIf(!withPostgres)('keeps them with three workers on PostgreSQL, one killed for good', { timeout: 240_000 }, async () => {
    const { code, output } = await chaos(['--store', 'postgres', '--workers', '3']);
    expect(code, output).toBe(0);
    expect(output).toMatch(/chaos: 6 SIGKILLs, \d+ starts, w4 killed for good/);
    expect(output).toMatch(/all invariants hold/);
    expect(output).not.toMatch(/exited 70/);
  });
});
