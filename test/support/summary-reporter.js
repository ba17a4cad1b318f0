/**
 * Prints one plain closing line after jest's own summary, e.g. `tests: 487 passed, 0 failed, 0 skipped`,
 * so CI logs and tools that read closing lines see the counts. When browser tests were skipped for want of a
 * browser (test/support/browser.ts marks their block), it says so once, with how to install one.
 */
const NO_BROWSER_MARK = '[skipped: no chromium]';

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const skippedForBrowser = results.testResults
      .flatMap((file) => file.testResults)
      .filter(
        (test) => test.status === 'pending' && test.ancestorTitles.some((title) => title.includes(NO_BROWSER_MARK)),
      );
    if (skippedForBrowser.length > 0) {
      const path = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
      process.stdout.write(
        `browser tests: ${skippedForBrowser.length} skipped, no Chromium at ${path}: ` +
          'install it with `apt-get install chromium` or set CHROMIUM_PATH (REQUIRE_BROWSER=1 makes this a failure)\n',
      );
    }
    process.stdout.write(
      `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`,
    );
  }
}

module.exports = SummaryReporter;
