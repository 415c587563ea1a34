/**
 * The short chaos run, part of `npm test` so that CI runs it on every change:
 * the real script (`npm run chaos` runs the long one), a smaller batch and
 * fewer kills. Its seed is printed, and CHAOS_SEED replays it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../dist/chaos/run.js', import.meta.url));

describe('npm run chaos, short', () => {
  it('keeps every invariant through SIGKILLs under every fault at once', { timeout: 240_000 }, async () => {
    expect(existsSync(SCRIPT), 'run `npm run build` first (npm test does)').toBe(true);
    const env = { ...process.env, CHAOS_ROWS: '200', CHAOS_KILLS: '6', CHAOS_SMALL_FILES: '1' };
    const child = spawn(process.execPath, [SCRIPT], { env });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    process.stdout.write(output);
    expect(code, output).toBe(0);
    expect(output).toMatch(/chaos: 6 SIGKILLs/);
    expect(output).toMatch(/all invariants hold/);
    expect(output).not.toMatch(/exited 70/);
  });
});
