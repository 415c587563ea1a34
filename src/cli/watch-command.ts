/** `paybatch watch`: the always-on daemon, until SIGINT or SIGTERM. */
import { Command } from 'commander';
import { systemClock } from '../clock.js';
import { roomForSending } from '../heap.js';
import type { ConsoleServer } from '../console/server.js';
import { withWorkspace } from './workspace-options.js';

/** The whole shutdown, including closing the store, stays within this [issue: exit within 10 seconds]. */
const SHUTDOWN_MS = 10_000;

export function watchCommand(): Command {
  return withWorkspace(new Command('watch'))
    .description('Run as a daemon: take files dropped into the inbox, receive signed webhooks, poll as a fallback, run the schedules; stop with SIGINT or SIGTERM.')
    .option('--force', 'take files even when the same content was taken before (their external ids still cannot be paid twice)')
    .action(async (opts: { home?: string; config?: string; force?: boolean }) => {
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ ledgerUrlFor }, { Daemon }, { withEngineSession }, { ApprovalGate }, { cancelOneRow }] = await Promise.all([
        import('../engine/reconcile-report.js'), import('../watch/daemon.js'), import('./engine-session.js'), import('../engine/approval-gate.js'), import('../engine/cancel.js'),
      ]);
      await withEngineSession(opts, async ({ config, workspace, store, log, connection, shared, damage }) => {
        const daemon = new Daemon({
          workspace, store, client: connection.client, credentials: connection.credentials, config, clock: systemClock, beforeSending: roomForSending, log, force: opts.force, shared,
          ledgerUrl: ledgerUrlFor(config.reports, connection.embedded?.operatorUrl ?? null),
        });
        // Damage found by the check beside the work: the daemon takes no more work, as when SQLite reports it.
        void damage.then((problem) => problem !== null && daemon.databaseDamaged(problem.message));
        let consoleServer: ConsoleServer | null = null;
        let signals = 0;
        const onSignal = (signal: NodeJS.Signals): void => {
          signals += 1;
          if (signals > 1) {
            // A second signal forces: whatever was in flight is resolved at the next start.
            process.stderr.write(`paybatch: ${signal} again: stopping now\n`);
            process.exit(130);
          }
          process.stderr.write(`paybatch: ${signal}: stopping (no new files or webhooks; finishing the calls in flight)\n`);
          // Past the limit, the process ends whatever is still running.
          setTimeout(() => process.exit(1), SHUTDOWN_MS).unref();
          // Its failure, if any, is the daemon's own (daemon.failure, thrown below once finished) or said here.
          void daemon.stop(SHUTDOWN_MS - 1_500).catch((error: unknown) => process.stderr.write(`paybatch: warning: stopping: ${(error as Error).message}\n`));
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        try {
          const started = await daemon.start();
          if (config.console.enabled) {
            // Loaded only when on: the console's framework stays out of a daemon that does not serve it.
            const { startConsole } = await import('../console/server.js');
            consoleServer = await startConsole({
              store, config, clock: systemClock, workspace, log,
              actions: { cancel: (batch, line, by) => cancelOneRow({ store, client: connection.client, clock: systemClock, engine: config.engine, log, gate: new ApprovalGate(config.approvalPolicy, store, systemClock, config.approvals.estimate_rates) }, batch, line, by), client: connection.client },
              metrics: daemon.metrics,
            }, config.console.listen);
            process.stderr.write(`paybatch: console at ${consoleServer.url}\n`);
          }
          const next = Object.entries(started.schedules).map(([name, at]) => `${name} next at ${at === null ? 'never' : new Date(at).toISOString()}`);
          process.stderr.write(`paybatch: watching ${workspace.folders.inbox}\n`);
          process.stderr.write(`paybatch: webhooks received at ${started.webhookUrl} (health: ${started.healthUrl})\n`);
          if (next.length > 0) process.stderr.write(`paybatch: schedules: ${next.join('; ')}\n`);
          await daemon.finished;
          if (daemon.failure) throw daemon.failure;
          process.stderr.write('paybatch: stopped\n');
        } catch (error) {
          await daemon.stop(SHUTDOWN_MS - 1_500);
          throw error;
        } finally {
          await consoleServer?.close();
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      }, { what: 'watch' });
    });
}
