import { defineConfig } from 'vitest/config';
import { SYSTEM, UNIT } from './test/tiers.js';

const tier = (name: 'unit' | 'integration' | 'system', include: string[], exclude: string[] = []) => ({
  extends: true as const,
  test: { name, include, exclude, env: { PAYBATCH_TEST_TIER: name } },
});

export default defineConfig({
  test: {
    // An empty run is a failure: a test command that ran nothing proves nothing.
    passWithNoTests: false,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // The summary reporter also writes test-results/junit.xml.
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      tier('unit', UNIT),
      tier('integration', ['test/**/*.test.ts'], [...UNIT, ...SYSTEM]),
      tier('system', SYSTEM),
    ],
  },
});
