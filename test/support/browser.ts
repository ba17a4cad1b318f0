/**
 * The browser of the UI tests: Chromium at `CHROMIUM_PATH` (default `/usr/bin/chromium`, Debian's package),
 * driven by playwright-core. Absent on a machine without it: the UI tests then say how to install one.
 */
import { existsSync } from 'node:fs';

/** Where Debian's chromium package puts the browser. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/** How to get a browser for the UI tests. */
export const BROWSER_INSTALL_HINT = 'apt-get install chromium (or set CHROMIUM_PATH to a Chromium or Chrome binary)';

/** The path of the Chromium binary to use, or null when there is none. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const path = env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  return existsSync(path) ? path : null;
}
