/** `paybatch run`: take the inbox, pay every valid row exactly once, follow, write results. */
import { Command, Option } from 'commander';
import { systemClock } from '../clock.js';
import { roomForSending } from '../heap.js';
import { ExitCode, PaybatchError, ServiceUnavailable } from '../errors.js';
import { stageWords } from '../engine/batch-stage.js';
import { interruptedWords } from './run-interrupt.js';
import { RunStopper } from '../engine/run-stopper.js';
import type { RunReport } from '../engine/run.js';
import { parseDuration } from './duration.js';
import { JSON_FLAG } from './json-flag.js';
import { withWorkspace } from './workspace-options.js';
import { formatMoneyMap } from '../validate/money.js';

/**
 * How long Ctrl-C waits for the calls in flight to be answered before `run` lets go of the service and the store
 * anyway: a call still unanswered then is asked about by its external id at the next start, never sent twice.
 */
const STOP_GRACE_MS = 10_000;

export function renderRun(report: RunReport): string {
  const lines: string[] = [];
  for (const outcome of report.intake) {
    if (outcome.kind === 'rejected') lines.push(`rejected ${outcome.batch}: ${outcome.report.invalid} invalid rows, nothing sent; report ${outcome.reportFile}`);
    if (outcome.kind === 'unreadable') lines.push(`unreadable ${outcome.batch}: ${outcome.error.message}; report ${outcome.reportFile}`);
    if (outcome.kind === 'not_read') lines.push(`refused ${outcome.file}: ${outcome.reason}; note ${outcome.reportFile}`);
    if (outcome.kind === 'duplicate') lines.push(`refused ${outcome.file}: same content as batch ${outcome.earlier.id}; note ${outcome.noteFile}`);
    if (outcome.kind === 'waiting') lines.push(`not taken yet: ${report.fileWaits[outcome.name] ?? `${outcome.name}: ${outcome.reason}`}; the next run looks again`);
    if (outcome.kind === 'changed') lines.push(`put back ${outcome.name}: ${outcome.reason}`);
  }
  for (const batch of report.batches) {
    const states = Object.entries(batch.by_state).map(([state, n]) => `${state} ${n}`).join(', ');
    const stage = report.stages[batch.batch];
    const where = stage ? stageWords(stage) : batch.unsettled > 0 ? `${batch.unsettled} not final yet` : 'all final';
    lines.push(`${batch.batch} (${batch.file}): ${batch.rows} rows: ${states}; ${where}`);
    const reasons = Object.entries(batch.by_reason).map(([reason, n]) => `${reason} ${n}`).join(', ');
    if (reasons) lines.push(`  refused or held by paybatch: ${reasons}`);
    const money = [...(Object.keys(batch.paid_out).length > 0 ? [`paid out ${formatMoneyMap(batch.paid_out)}`] : []), ...(Object.keys(batch.funded).length > 0 ? [`funded ${formatMoneyMap(batch.funded)}`] : [])];
    if (money.length > 0) lines.push(`  ${money.join('; ')}`);
    if (batch.approval === 'not_needed') lines.push(`  ${batch.approval_reason ?? 'nothing to send: no approval is needed'}`);
    if (batch.approval === 'awaiting') lines.push(`  awaiting approval: nothing is sent before it (paybatch preview ${batch.batch}; paybatch approve ${batch.batch} --key FILE --as NAME)`);
    if (batch.need_person > 0) lines.push(`  ${batch.need_person} rows need a person (see the results' state_reason and paybatch status ${batch.batch})`);
    lines.push(`  results ${batch.results_file}`);
  }
  if (report.stoppedEarly) lines.push(report.stoppedEarly);
  if (report.serviceTrouble) lines.push(`the payout service stopped answering (${report.serviceTrouble}); what waits is taken up by the next run`);
  if (lines.length === 0) lines.push('nothing to do: the inbox is empty and no batch is in flight');
  return `${lines.join('\n')}\n`;
}

export function runCommand(): Command {
  return withWorkspace(new Command('run'))
    .description('Take every file in the inbox, pay each valid row exactly once, follow every payout, write results.')
    .addOption(new Option('--wait <duration>', 'how long to follow rows not final yet (90s, 10m, 2h)').argParser(parseDuration).default(5 * 60_000, '5m'))
    .option('--force', 'take files even when the same content was taken before (their external ids still cannot be paid twice)')
    .option(...JSON_FLAG)
    .addOption(new Option('--progress-every <duration>', 'how often progress is printed when standard error is not a terminal (live bars on a terminal)').argParser(parseDuration).default(undefined, '10s'))
    .action(async (opts: { home?: string; config?: string; wait: number; force?: boolean; progressEvery?: number; json?: boolean }) => {
      const { printJson, runJson } = await import('./json-output.js');
      // Loaded when the command runs, not for --help (docs/performance.md).
      const [{ withEngineSession }, { runOnce }, { startProgress }] = await Promise.all([import('./engine-session.js'), import('../engine/run.js'), import('./progress.js')]);
      await withEngineSession(opts, async ({ config, workspace, store, log, connection, shared, damage, stop }) => {
        // Damage found by the check beside the work stops it at once, as at start: every step is in the database.
        // The session lets go of the workspace, its log and notifications first (the lease is released).
        void damage.then((problem) => problem !== null && stop(problem));
        const progress = startProgress(store, process.stderr, { intervalMs: opts.progressEvery });
        // Ctrl-C: no new step starts and the steps in flight end, their writes answered and recorded (at most STOP_GRACE_MS); then
        // said what was stopped and what is in flight, and let go as at the end (exit 130). A second one ends at once.
        let doing = 'starting';
        const stopper = new RunStopper();
        const onInterrupt = (): void => {
          process.off('SIGINT', onInterrupt);
          process.once('SIGINT', () => process.exit(ExitCode.interrupted));
          void (async () => {
            await progress.stop().catch(() => {});
            const steps = stopper.stepsInFlight;
            // A create, fund or cancel under way is answered and recorded; a read is dropped at once (it changes nothing).
            const finishing = steps === 0 ? 'no step is in flight' : `${steps === 1 ? '1 step' : `${steps} steps`} in flight end first: a create, fund or cancel under way is answered and recorded, a read is dropped (at most ${STOP_GRACE_MS / 1000} s; Ctrl-C again to stop at once)`;
            process.stderr.write(`paybatch: Ctrl-C: stopping; no new step starts, ${finishing}\n`);
            if (!(await stopper.stop(STOP_GRACE_MS).catch(() => false))) log('run_stop_grace_over', { grace_ms: STOP_GRACE_MS });
            const words = await interruptedWords(store, doing, systemClock.now()).catch((error: unknown) => `stopped by Ctrl-C (SIGINT) while ${doing} (${(error as Error).message}); the next paybatch run resumes from where this one stopped.`);
            log('run_interrupted', { doing });
            await stop(new PaybatchError(words, ExitCode.interrupted));
          })();
        };
        process.on('SIGINT', onInterrupt);
        let report;
        try {
          report = await runOnce({
            workspace, store, client: connection.client, config, clock: systemClock, beforeSending: roomForSending, log, force: opts.force, waitMs: opts.wait, shared,
            say: (line) => progress.say(line), doing: (what) => (doing = what), stopper,
          });
        } finally {
          process.off('SIGINT', onInterrupt);
          await progress.stop();
        }
        // A damaged database is said before any report of work done, not after "nothing to do".
        const problem = await damage;
        if (problem) throw problem;
        if (opts.json) printJson('run', runJson(report));
        else process.stdout.write(renderRun(report));
        if (report.serviceTrouble) {
          log('service_not_answering', { reason: report.serviceTrouble, wait_ms: opts.wait });
          throw new ServiceUnavailable(`the payout service stopped answering: ${report.serviceTrouble}`);
        }
        // Finished, but a person must look: cron and systemd see it in the exit code.
        if (report.batches.some((b) => b.need_person > 0)) process.exitCode = ExitCode.attention;
      });
    });
}
