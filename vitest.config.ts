import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // An empty run is a failure: a test command that ran nothing proves nothing.
    passWithNoTests: false,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
