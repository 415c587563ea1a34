/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after the run,
 * so that any CI reading the log can tell tests ran and how they ended. A test
 * file that fails before its tests run (an error while it loads, such as the
 * PostgreSQL tests under CI=true with no server) has no test to count, so it
 * counts as one failure itself: the line never says 0 failed of a failed run.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
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
    const files = filesFailedOutsideTests > 0 ? ` (${filesFailedOutsideTests} of them a test file that failed before its tests ran)` : '';
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${files}\n`);
  }
}
