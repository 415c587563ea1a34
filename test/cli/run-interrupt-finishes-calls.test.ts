/**
 * Ctrl-C during `run`, on the built binary, while calls are in flight at the
 * service: no new step starts, the calls under way finish and their answers are
 * recorded before the run lets go of the service and the store (exit 130). The
 * funding calls are held at a tap in front of the sandbox until the run has
 * said it is stopping, so the interrupt lands on them by event, not by a delay.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { BIN, runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, IN_FLIGHT_SANDBOX, template } from '../helpers/engine.js';
import { gate } from '../helpers/gates.js';
import type { ServiceTap } from '../helpers/service-tap.js';
import { serviceTap } from '../helpers/service-tap.js';


function phasesIn(home: string): unknown {
  const db = new Database(join(home, 'paybatch.db'), { readonly: true });
  try {
    return db.prepare('SELECT phase, COUNT(*) AS n, COUNT(funded_at) AS funded FROM rows GROUP BY phase').all();
  } finally {
    db.close();
  }
}

describe('run: Ctrl-C lets the calls in flight finish before it lets go', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-interrupt-'));
  let sandbox: RunningSandbox;
  let tap: ServiceTap;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: IN_FLIGHT_SANDBOX });
    tap = await serviceTap(sandbox.url);
  });
  afterAll(async () => {
    await tap.close();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('three funding calls held at the service when Ctrl-C comes: each is answered and recorded (funded), none left to ask about', { timeout: 60_000 }, async () => {
    const home = join(dir, 'home');
    const env = { ...process.env, PAYBATCH_HOME: home, PAYBATCH_BASE_URL: tap.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret, TZ: 'UTC' };
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'pay.csv'));

    const release = gate();
    let heldFunds = 0;
    const allHeld = gate();
    tap.decide = (call) => {
      if (call !== 'fund') return { at: 'pass' };
      if (++heldFunds === 3) allHeld.open();
      return { at: 'held', until: release.opened };
    };
    const child = spawn(process.execPath, [BIN, 'run', '--wait', '60s'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const stopping = gate();
    // The rows as they stood when the run said what it stopped: read the moment the words arrive.
    let phasesAtWords: unknown = null;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('paybatch: Ctrl-C: stopping; no new step starts, 3 steps in flight end first: a create, fund or cancel under way is answered and recorded')) stopping.open();
      if (phasesAtWords === null && stderr.includes('stopped by Ctrl-C')) phasesAtWords = phasesIn(home);
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await allHeld.opened;
    child.kill('SIGINT');
    // The run has stopped starting steps; only now are the three calls answered.
    await Promise.race([stopping.opened, exited.then(() => { throw new Error(`run ended before saying it was stopping: ${stderr}`); })]);
    release.open();
    expect(await exited, stderr).toBe(130);

    expect(stderr).toMatch(/paybatch: stopped by Ctrl-C \(SIGINT\) while (sending|following the rows sent)\.\n {2}B\S+ \(pay\.csv\): 3 rows in flight at the service/);
    expect(stderr).toContain('3 rows stay in flight at the service and are followed by the next run. Nothing is lost');
    expect(stderr).not.toMatch(/were being sent/);
    // Recorded before the words were said, not only before the process ended.
    expect(phasesAtWords).toEqual([{ phase: 'funded', n: 3, funded: 3 }]);
    expect(phasesIn(home)).toEqual([{ phase: 'funded', n: 3, funded: 3 }]);
    // Nothing was called again: three funds, each once.
    expect(tap.counts.fund).toBe(3);
  });
});
