/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after the run,
 * so that any CI reading the log can tell tests ran and how they ended. A test
 * file that fails before its tests run (an error while it loads, such as the
 * PostgreSQL tests under CI=true with no server) has no test to count, so it
 * counts as one failure itself: the line never says 0 failed of a failed run.
 * Before it, the ten slowest test files with their times, where to look first
 * when the suite grows slow (the JUnit file in test-results/ has every test).
 */
import type { TestModule } from 'vitest/node';
import { JUnitReporter } from 'vitest/reporters';

/** Where every test's result and time is written, for CI and for a person looking for the slow ones. */
export const JUNIT_FILE = 'test-results/junit.xml';

// It writes the JUnit file itself (as vitest's JUnit reporter) and only then prints: reporters end
// concurrently, and the closing line must stay the last line of the run.
export default class SummaryReporter extends JUnitReporter {
  constructor() {
    super({ outputFile: JUNIT_FILE });
  }

  override async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    await super.onTestRunEnd(testModules);
    const counts = { passed: 0, failed: 0, skipped: 0 };
    let filesFailedOutsideTests = 0;
    for (const module of testModules) {
      let testsFailed = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') testsFailed += 1;
        else counts.skipped += 1;
      }
      counts.failed += testsFailed;
      if (module.state() === 'failed' && testsFailed === 0) filesFailedOutsideTests += 1;
    }
    counts.failed += filesFailedOutsideTests;
    process.stdout.write(slowest(testModules, 10));
    const files = filesFailedOutsideTests > 0 ? ` (${filesFailedOutsideTests} of them a test file that failed before its tests ran)` : '';
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${files}\n`);
  }
}

/** The `count` slowest files, by the time their tests and hooks took, as lines to print. */
function slowest(testModules: ReadonlyArray<TestModule>, count: number): string {
  const timed = testModules
    .map((module) => ({ name: `${module.project.name}: ${module.relativeModuleId}`, ms: module.diagnostic().duration }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count);
  if (timed.length === 0) return '';
  return `\nslowest test files:\n${timed.map(({ name, ms }) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${name}`).join('\n')}\n`;
}
