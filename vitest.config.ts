import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/longest-first-sequencer.js';
import { SYSTEM, SYSTEM_ALONE, UNIT } from './test/tiers.js';

type TierName = 'unit' | 'integration' | 'system';

/**
 * Groups run one after another (`groupOrder`): unit first, so a broken rule fails in seconds; then integration and
 * system together, two files at a time, so that a file waiting on a child process or the sandbox leaves the core to
 * another; last the few system files that run alone. A group has one worker count (vitest refuses two in one group).
 */
const tier = (name: TierName, order: number, include: string[], exclude: string[], pool: { isolate: boolean; maxWorkers: number }, project: string = name) => ({
  extends: true as const,
  test: { name: project, include, exclude, env: { PAYBATCH_TEST_TIER: name }, sequence: { groupOrder: order }, ...pool, ...(name === 'system' ? SYSTEM_BOUNDS : {}) },
});

/**
 * A bound catches a hang, never measures a speed: the system tier's child processes took two to three times as long
 * under two busy loops as on a quiet machine (a 50,000-row validation 24 s, past the 20 s the other tiers keep).
 */
const SYSTEM_BOUNDS = { testTimeout: 60_000, hookTimeout: 60_000 };

/**
 * Integration and system files at once. They mostly wait (on the sandbox's payouts, on child processes, on --wait
 * bounds): on the quiet 2-core machine `vitest run` took 388 s two at a time (491 s of CPU, 1.3 cores used), 337 s
 * three at a time (521 s), 308 s four at a time (494 s). Under busy loops more files at once also take a larger share
 * of the cores from the loops; each file's own time grows, which the bounds allow for (SYSTEM_BOUNDS).
 */
const FILES_AT_ONCE = 4;

export default defineConfig({
  test: {
    // An empty run is a failure: a test command that ran nothing proves nothing.
    passWithNoTests: false,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Forks, not threads: the system tier starts worker threads and native modules (better-sqlite3) of its own.
    pool: 'forks',
    // The long files first in each group, whatever their tier (test/longest-first-sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // The summary reporter also writes test-results/junit.xml.
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      // Pure modules keep no state between files: one process runs them all, without a fresh module graph per file
      // (a fresh process per file cost more than the tests themselves).
      tier('unit', 0, UNIT, [], { isolate: false, maxWorkers: 1 }),
      // The engine and the stores wait on the sandbox's timers and on disk; the system files' child processes wait on
      // the sandbox's payouts and on --wait bounds: together, four files at a time on two cores (FILES_AT_ONCE).
      tier('integration', 1, ['test/**/*.test.ts'], [...UNIT, ...SYSTEM], { isolate: false, maxWorkers: FILES_AT_ONCE }),
      tier('system', 1, SYSTEM, SYSTEM_ALONE, { isolate: true, maxWorkers: FILES_AT_ONCE }),
      // The files that time a stop against a thread's work: alone, last (see SYSTEM_ALONE).
      tier('system', 2, SYSTEM_ALONE, [], { isolate: true, maxWorkers: 1 }, 'system-alone'),
    ],
  },
});
