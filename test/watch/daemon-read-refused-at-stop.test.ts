/**
 * The daemon's reads run in the background of its loop (Pipeline.follow): one
 * the service answers 401 (credentials refused) while the daemon is stopping
 * must neither break the stop (results written, heartbeat, watch_stopped) nor
 * be lost: it is the daemon's failure, so `watch` ends 77 as on any refusal.
 * The stop begins the moment the refusal is told (read_failed), before the
 * daemon's loop can look again: the refusal is then met only by the stop.
 * Real sandbox over HTTP behind a tap that refuses the reads, real SQLite.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthenticationRefused } from '../../src/api/errors.js';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext, eventually } from '../helpers/daemon.js';
import { IN_FLIGHT_SANDBOX, template } from '../helpers/engine.js';
import { gate } from '../helpers/gates.js';
import type { ServiceTap } from '../helpers/service-tap.js';
import { serviceTap } from '../helpers/service-tap.js';


describe('watch: a read refused while the daemon stops', () => {
  let ctx: DaemonContext;
  let tap: ServiceTap;
  afterEach(async () => {
    await ctx.stop();
    await tap.close();
  });

  it('the stop finishes its work (results, watch_stopped) and the refusal is the daemon\'s failure', { timeout: 30_000 }, async () => {
    let stopping: Promise<void> | null = null;
    const stopped = gate();
    ctx = await daemonContext({
      sandbox: IN_FLIGHT_SANDBOX, front: async (url) => (tap = await serviceTap(url)).url,
      onLog: (event) => {
        if (event !== 'read_failed' || stopping) return;
        stopping = ctx.daemon.stop(5_000);
        stopped.open();
      },
    });
    copyFileSync(template('templates/eur-iban-bank.csv'), join(ctx.workspace.folders.inbox, 'pay.csv'));
    const funded = (): number => (ctx.store as unknown as { db: { prepare(sql: string): { get(): { n: number } } } }).db.prepare("SELECT COUNT(*) AS n FROM rows WHERE phase = 'funded'").get().n;
    await eventually(() => funded() === 3, 15_000, 'three rows funded');
    tap.decide = (call) => (call === 'read' ? { at: 'refused', until: Promise.resolve() } : { at: 'pass' });
    await stopped.opened;
    await expect(stopping).resolves.toBeUndefined();
    const events = ctx.logs.map((l) => l.event);
    expect(events).toContain('watch_stopped');
    expect(ctx.daemon.failure).toBeInstanceOf(AuthenticationRefused);
    // The refused read is told in the log, not dropped.
    expect(ctx.logs.some((l) => l.event === 'read_failed' && /key revoked|refused/.test(String(l.fields.reason)))).toBe(true);
  });
});
