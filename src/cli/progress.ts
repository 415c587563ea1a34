/**
 * Progress of a run, per batch, by stage: rows sent (created at the service),
 * funded and final, and the next change expected (batch-stage.ts: the next read,
 * an approval awaited, a file's second look). On a terminal, live bars
 * (cli-progress) on standard error, each row filling a third of its share when
 * sent, two when funded, all when final; elsewhere (cron, CI, a log file) a
 * plain line per batch every so often, which a log keeps readably.
 */
import cliProgress from 'cli-progress';
import { RepeatBoundedByCost } from '../engine/repeat-bounded-by-cost.js';
import type { BatchStage } from '../engine/batch-stage.js';
import { stageWords } from '../engine/batch-stage.js';
import type { StageStore } from '../engine/stage-facts.js';
import { readBatchStage } from '../engine/stage-facts.js';
import type { BatchProgress, BatchRecord } from '../store/port.js';

export interface ProgressSource extends StageStore {
  openBatches(): Promise<BatchRecord[]>;
}

export interface ProgressDisplay {
  /** A line for the person watching, written above the bars on a terminal (so they are not torn). */
  say(line: string): void;
  stop(): Promise<void>;
}

export function progressLine(batch: string, p: BatchProgress, stage: BatchStage): string {
  return `progress ${batch}: ${p.sendable} rows to send: ${p.created} sent, ${p.funded} funded, ${p.settled} final; ${stageWords(stage)}`;
}

/** Each row counts a third when sent, two thirds when funded, whole when final (sent or not): the bar moves at every stage. */
export function stagedValue(p: BatchProgress): number {
  return p.settled >= p.sendable ? p.sendable * 3 : Math.min(p.sendable * 3, p.created + p.funded + p.settled);
}

export function startProgress(source: ProgressSource, out: NodeJS.WritableStream & { isTTY?: boolean }, options: { intervalMs?: number } = {}): ProgressDisplay {
  const tty = out.isTTY === true;
  const intervalMs = options.intervalMs ?? (tty ? 250 : 10_000);
  const multibar = tty
    ? new cliProgress.MultiBar({
      stream: out,
      format: '{batch} |{bar}| sent {created}  funded {funded}  final {settled}/{rows}  {next}',
      hideCursor: true,
      clearOnComplete: false,
      autopadding: true,
    }, cliProgress.Presets.shades_classic)
    : null;
  const bars = new Map<string, cliProgress.SingleBar>();
  let busy = false;
  const update = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      for (const batch of await source.openBatches()) {
        const { stage, progress: p } = await readBatchStage(source, batch, Date.now());
        const payload = { batch: batch.id, created: p.created, funded: p.funded, settled: p.settled, rows: p.sendable, next: stageWords(stage) };
        if (!multibar) {
          out.write(`paybatch: ${progressLine(batch.id, p, stage)}\n`);
          continue;
        }
        const bar = bars.get(batch.id);
        if (bar) {
          bar.setTotal(p.sendable * 3);
          bar.update(stagedValue(p), payload);
        } else {
          bars.set(batch.id, multibar.create(p.sendable * 3, stagedValue(p), payload));
        }
      }
    } finally {
      busy = false;
    }
  };
  // Counting a batch's rows takes a while at a million rows: at most a twentieth of the time (see RepeatBoundedByCost).
  const cadence = new RepeatBoundedByCost(intervalMs, 20, performance.now());
  let timer: NodeJS.Timeout;
  let stopped = false;
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      const started = performance.now();
      void update().catch(() => {}).finally(() => {
        cadence.ran(started, performance.now());
        schedule();
      });
    }, cadence.interval());
    timer.unref();
  };
  schedule();
  return {
    say(line: string) {
      if (stopped) out.write(`paybatch: ${line}\n`);
      // Once bars are drawn, above them; before, straight away (the multibar logs only when it redraws).
      else if (multibar && bars.size > 0) multibar.log(`paybatch: ${line}\n`);
      else out.write(`paybatch: ${line}\n`);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (multibar) {
        await update().catch(() => {});
        multibar.stop();
      }
    },
  };
}
