/**
 * Prints one plain closing line after jest's own summary, e.g. `tests: 487 passed, 0 failed, 0 skipped`,
 * so CI logs and tools that read closing lines see the counts.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(
      `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`,
    );
  }
}

module.exports = SummaryReporter;
