/**
 * Progress of a run, per batch: rows created, funded and final. On a terminal,
 * live bars (cli-progress) on standard error; elsewhere (cron, CI, a log file)
 * a plain line per batch every so often, which a log keeps readably.
 */
import cliProgress from 'cli-progress';
import { RepeatBoundedByCost } from '../engine/repeat-bounded-by-cost.js';
import type { BatchProgress, BatchRecord } from '../store/store.js';

export interface ProgressSource {
  openBatches(): Promise<BatchRecord[]>;
  progress(batchId: string): Promise<BatchProgress>;
}

export interface ProgressDisplay {
  stop(): Promise<void>;
}

export function progressLine(batch: string, p: BatchProgress): string {
  return `progress ${batch}: ${p.sendable} rows to send: ${p.created} created, ${p.funded} funded, ${p.settled} final`;
}

export function startProgress(source: ProgressSource, out: NodeJS.WritableStream & { isTTY?: boolean }, options: { intervalMs?: number } = {}): ProgressDisplay {
  const tty = out.isTTY === true;
  const intervalMs = options.intervalMs ?? (tty ? 250 : 10_000);
  const multibar = tty
    ? new cliProgress.MultiBar({
      stream: out,
      format: '{batch} |{bar}| {settled}/{total} final  created {created}  funded {funded}',
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
        const p = await source.progress(batch.id);
        const payload = { batch: batch.id, created: p.created, funded: p.funded, settled: p.settled };
        if (!multibar) {
          out.write(`paybatch: ${progressLine(batch.id, p)}\n`);
          continue;
        }
        const bar = bars.get(batch.id);
        if (bar) {
          bar.setTotal(p.sendable);
          bar.update(p.settled, payload);
        } else {
          bars.set(batch.id, multibar.create(p.sendable, p.settled, payload));
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
