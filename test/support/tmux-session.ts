import { execFileSync } from 'node:child_process';
import { waitFor } from './wait-for';

/** A terminal program run in a detached tmux session: what a person types, and the screen they read. */
export interface TmuxSession {
  /** Types `text` and presses Enter. */
  type(text: string): void;
  /** The screen and its scroll-back, as text. */
  screen(): string;
  /** Waits until the screen matches `pattern`; returns the screen then. */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(): void;
}

/**
 * Starts `command` (a shell command line, run in `cwd` with `env` added) in a new detached tmux session of 200 x 50
 * characters, so that a test drives an interactive program as a person at a terminal would.
 */
export function startTmuxSession(name: string, command: string, cwd: string, env: NodeJS.ProcessEnv): TmuxSession {
  const exports = Object.entries(env)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${shellQuote(value!)}`)
    .join(' ');
  const tmux = (...args: string[]): string => execFileSync('tmux', args, { encoding: 'utf8' });
  tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', '-c', cwd, `env ${exports} ${command}; sleep 600`);
  const screen = (): string => tmux('capture-pane', '-p', '-J', '-t', name, '-S', '-500');
  return {
    type: (text) => {
      tmux('send-keys', '-t', name, '-l', text);
      tmux('send-keys', '-t', name, 'Enter');
    },
    screen,
    waitForScreen: (pattern, timeoutMs = 120_000) =>
      waitFor(`the screen to show ${pattern}`, () => (pattern.test(screen()) ? screen() : undefined), {
        timeoutMs,
        intervalMs: 200,
      }),
    kill: () => {
      try {
        tmux('kill-session', '-t', name);
      } catch {
        // Already gone.
      }
    },
  };
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
