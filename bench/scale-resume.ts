/**
 * bench:scale's resume with many payouts in flight (issue 42): a batch of
 * BENCH_RESUME_ROWS rows (default 300,000) through `paybatch run`, killed with
 * SIGKILL once BENCH_IN_FLIGHT of them (default 20,000) are created at the
 * service, whose payouts end an hour later; then started again, BENCH_ROUNDS
 * times (default 3), each killed as soon as its first create came through. The
 * time from each start to its first new create at the service (the proxy in
 * front of the sandbox sees it), and to its first call of any kind, is printed;
 * the goal (first create within 1 s) is judged on the median round.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { generateBatch } from './generate-batch.js';
import type { CallProxy } from './paybatch-run.js';
import { rowFigures, runPaybatch, workspace } from './paybatch-run.js';
import type { SandboxProcess } from './sandbox-process.js';

export const RESUME_GOAL_MS = 1000;

export interface ResumeSettings {
  rows: number;
  inFlight: number;
  rounds: number;
}

export const resumeSettings = (env: NodeJS.ProcessEnv): ResumeSettings => ({
  rows: Number(env.BENCH_RESUME_ROWS ?? 300_000),
  inFlight: Number(env.BENCH_IN_FLIGHT ?? 20_000),
  rounds: Number(env.BENCH_ROUNDS ?? 3),
});

const seconds = (ms: number | null): string => (ms === null ? 'never' : `${(ms / 1000).toFixed(2)} s`);

/** Prints the figures; true when the goal is met. */
export async function measureResume(dir: string, sandbox: SandboxProcess, proxy: CallProxy, settings: ResumeSettings): Promise<boolean> {
  const file = join(dir, 'resume.csv');
  await generateBatch(file, settings.rows);
  const home = workspace(dir, 'resume', file, proxy.url, sandbox);
  const createdBefore = proxy.creates();
  await runPaybatch(['run', '--wait', '1h'], home, { killWhen: () => proxy.creates() - createdBefore >= settings.inFlight });
  const killed = rowFigures(home);
  console.log(`  resume, ${settings.rows} rows: killed with SIGKILL at ${killed.sent} created (in flight: their payouts end an hour later), ${killed.funded} funded, ${killed.ready} not sent yet`);
  const firstCreates: number[] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const before = rowFigures(home);
    const resumed = await runPaybatch(['run', '--wait', '1h'], home, { starting: () => proxy.arm(), killWhen: () => proxy.firstCreateAt() !== null });
    const create = proxy.firstCreateAt();
    firstCreates.push(create ?? Number.POSITIVE_INFINITY);
    console.log(`    round ${round}: ${before.sent} in flight at the start; first call ${seconds(proxy.firstCallAt())}, first new create ${seconds(create)} after the start; peak RSS ${resumed.peakMb} MB`);
  }
  rmSync(home, { recursive: true, force: true });
  const median = [...firstCreates].sort((a, b) => a - b)[Math.floor(firstCreates.length / 2)] as number;
  const met = median < RESUME_GOAL_MS;
  console.log(`  first new create after SIGKILL, median of ${settings.rounds}  ${seconds(Number.isFinite(median) ? median : null)}  (goal: within ${RESUME_GOAL_MS / 1000} s: ${met ? 'met' : 'NOT MET'})`);
  return met;
}
