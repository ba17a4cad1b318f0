/**
 * What a command started, and how it is stopped: on Ctrl-C (SIGINT) or SIGTERM, everything registered is
 * stopped in reverse order (the worker drains before the server it talks to goes away), once. A second
 * signal while stopping exits at once — except the copy of the first that npm relays when it is the parent
 * (a terminal's Ctrl-C reaches the whole process group, and npm forwards it once more). Started through
 * `npm run` / `npx`, the command also stops as if it had received SIGTERM when that npm goes away (killed with
 * SIGKILL, or SIGTERM, which npm relays only to its `sh -c`), so nothing is left running on its own; started
 * any other way (systemd, Docker, `nohup … &`) it keeps running when its starter exits (see parent-watch.ts).
 */
import { planParentWatch, processAlive, type ParentWatchPlan } from './parent-watch';

/** Timing of the lifecycle. */
export const LIFECYCLE_TIMING = {
  /** How often the parent process (and the npm wrapper) is checked. */
  parentCheckMs: 1_000,
} as const;

/** A stop function registered with {@link Lifecycle.defer}. */
interface Stoppable {
  name: string;
  stop(): Promise<void> | void;
}

/** Signals and cleanup of one command invocation. */
export class Lifecycle {
  private readonly stack: Stoppable[] = [];
  private stopping: Promise<void> | undefined;
  private resolveStopRequested!: (signal: NodeJS.Signals) => void;
  /** Resolves with the signal when the command is asked to stop. */
  readonly stopRequested: Promise<NodeJS.Signals>;
  /** The signal that stopped the command, if any. */
  signal: NodeJS.Signals | undefined;
  private readonly handlers: Array<[NodeJS.Signals, () => void]> = [];
  private parentTimer: NodeJS.Timeout | undefined;
  /** npm is the parent and relays signals: the next copy of the first signal is its relay, not a second one. */
  private relayExpected = false;
  private relays = false;

  constructor(private readonly log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)) {
    this.stopRequested = new Promise((resolve) => (this.resolveStopRequested = resolve));
  }

  /**
   * Listens for SIGINT and SIGTERM and, when `plan.watch` (by default: started through npm/npx, see
   * {@link planParentWatch}), watches the parent process and the npm wrapper. Call once, before starting anything.
   */
  listen(plan: ParentWatchPlan = planParentWatch()): this {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const handler = () => this.onSignal(signal);
      process.on(signal, handler);
      this.handlers.push([signal, handler]);
    }
    this.relays = plan.npm?.parent === true;
    if (plan.watch) this.watchParent(plan.npm?.pid);
    return this;
  }

  /** Stops watching the parent process (`--no-parent-watch`): the command then runs until it is stopped. */
  stopWatchingParent(): void {
    if (this.parentTimer) clearInterval(this.parentTimer);
    this.parentTimer = undefined;
  }

  private watchParent(npmPid: number | undefined): void {
    const parent = process.ppid;
    const timer = setInterval(() => {
      const gone =
        process.ppid !== parent
          ? `the parent process (${parent})`
          : npmPid !== undefined && npmPid !== parent && !processAlive(npmPid)
            ? `the npm process (${npmPid}) that started it`
            : undefined;
      if (!gone) return;
      this.stopWatchingParent();
      if (this.signal !== undefined) return;
      this.log(
        `durable-tools: ${gone} is gone; stopping. (--no-parent-watch or DURABLE_TOOLS_PARENT_WATCH=off keeps it running.)`,
      );
      this.onSignal('SIGTERM');
    }, LIFECYCLE_TIMING.parentCheckMs);
    timer.unref();
    this.parentTimer = timer;
  }

  /**
   * Kills a child process with SIGKILL if this process exits before the child was stopped (an uncaught error,
   * a second Ctrl-C): a last resort so that no child outlives the command.
   */
  killOnExit(pid: number): void {
    const kill = () => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    process.once('exit', kill);
    this.defer(`exit guard of process ${pid}`, () => void process.off('exit', kill));
  }

  /** Registers something started, to be stopped (in reverse order of registration) when the command ends. */
  defer(name: string, stop: () => Promise<void> | void): void {
    this.stack.push({ name, stop });
  }

  /** Stops everything registered, newest first; each is stopped once even if called again. */
  stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      while (this.stack.length > 0) {
        const item = this.stack.pop()!;
        try {
          await item.stop();
        } catch (error) {
          this.log(
            `durable-tools: stopping ${item.name} failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      this.stopWatchingParent();
      for (const [signal, handler] of this.handlers) process.off(signal, handler);
    })();
    return this.stopping;
  }

  private onSignal(signal: NodeJS.Signals): void {
    if (this.signal !== undefined && this.relayExpected && signal === this.signal) {
      this.relayExpected = false;
      this.log(`durable-tools: ${signal} relayed by npm: already stopping.`);
      return;
    }
    if (this.signal !== undefined) {
      this.log(`durable-tools: ${signal} again; exiting without waiting.`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    this.signal = signal;
    this.relayExpected = this.relays;
    this.log(`durable-tools: ${signal}: stopping what this command started (send it again to exit at once).`);
    this.resolveStopRequested(signal);
  }
}
