import { defineConfig } from 'vitest/config';
import { SYSTEM, SYSTEM_PAIRED, UNIT } from './test/tiers.js';

type TierName = 'unit' | 'integration' | 'system';

/**
 * Each tier is its own group (`groupOrder`): unit first, then integration, then
 * system, so a broken rule fails in seconds, and each group has its own worker
 * count (vitest refuses two counts in one group).
 */
const tier = (name: TierName, order: number, include: string[], exclude: string[], pool: { isolate: boolean; maxWorkers: number }, project: string = name) => ({
  extends: true as const,
  test: { name: project, include, exclude, env: { PAYBATCH_TEST_TIER: name }, sequence: { groupOrder: order }, ...pool },
});

export default defineConfig({
  test: {
    // An empty run is a failure: a test command that ran nothing proves nothing.
    passWithNoTests: false,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Forks, not threads: the system tier starts worker threads and native modules (better-sqlite3) of its own.
    pool: 'forks',
    // The summary reporter also writes test-results/junit.xml.
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      // Pure modules keep no state between files: one process runs them all, without a fresh module graph per file
      // (a fresh process per file cost more than the tests themselves).
      tier('unit', 0, UNIT, [], { isolate: false, maxWorkers: 1 }),
      // The engine and the stores wait on the sandbox's timers and on disk more than they use a core: two files at a time.
      tier('integration', 1, ['test/**/*.test.ts'], [...UNIT, ...SYSTEM, ...SYSTEM_PAIRED], { isolate: true, maxWorkers: 2 }),
      // The system files whose child processes mostly wait (on the sandbox, on --wait): two at a time.
      tier('system', 2, SYSTEM_PAIRED, [], { isolate: true, maxWorkers: 2 }, 'system-paired'),
      // Child processes, worker threads and Chromium that use both cores themselves: one file at a time.
      tier('system', 3, SYSTEM, SYSTEM_PAIRED, { isolate: true, maxWorkers: 1 }),
    ],
  },
});
