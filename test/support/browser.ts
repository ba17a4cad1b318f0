/**
 * Where the browser tests find Chromium, and what they do when there is none.
 *
 * The browser is Debian's `chromium` package driven by playwright-core (no browser download). Its path comes from
 * `CHROMIUM_PATH` (default `/usr/bin/chromium`). Without one, the browser tests are reported by jest as skipped
 * (their describe block's name says how to install one, and the summary reporter prints that once) — unless
 * `REQUIRE_BROWSER=1` (set by `.ci/run`), where a missing browser is a failing test.
 */
import { accessSync, constants, statSync } from 'node:fs';

/** Where Debian's chromium package puts the browser. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Marks the name of a browser test block skipped for want of a browser; test/support/summary-reporter.js looks for
 * it to print the install hint once per run.
 */
export const NO_BROWSER_MARK = '[skipped: no chromium]';

/** What to do about a missing browser, in one line. */
export const INSTALL_HINT = 'install it with `apt-get install chromium` or set CHROMIUM_PATH to a Chromium binary';

/** The path the browser tests look at: `CHROMIUM_PATH`, else Debian's. */
export function chromiumPathSetting(): string {
  return process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
}

/** The executable Chromium at `CHROMIUM_PATH` (default `/usr/bin/chromium`), or null when there is none. */
export function findChromium(): string | null {
  const path = chromiumPathSetting();
  try {
    if (!statSync(path).isFile()) return null;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}

/** Whether a missing browser must fail the run (`REQUIRE_BROWSER=1`, as in CI) rather than skip its tests. */
export function browserRequired(): boolean {
  return process.env.REQUIRE_BROWSER === '1';
}

/**
 * Declares a block of browser tests: `body` receives the Chromium path and declares hooks and tests as inside a
 * `describe`. With no browser the block is `describe.skip` (its hooks do not run, its tests count as skipped), or,
 * under `REQUIRE_BROWSER=1`, a single failing test that says what is missing.
 */
export function describeWithBrowser(name: string, body: (chromiumPath: string) => void): void {
  const chromiumPath = findChromium();
  if (chromiumPath) {
    describe(name, () => body(chromiumPath));
    return;
  }
  const missing = `No Chromium at ${chromiumPathSetting()}: ${INSTALL_HINT}`;
  if (browserRequired()) {
    describe(name, () => {
      test('has a browser to run in (REQUIRE_BROWSER=1)', () => {
        throw new Error(missing);
      });
    });
    return;
  }
  describe.skip(`${name} ${NO_BROWSER_MARK}`, () => body(''));
}
