/**
 * What a command started, and how it is stopped: on Ctrl-C (SIGINT) or SIGTERM, everything registered is
 * stopped in reverse order (the worker drains before the server it talks to goes away), once. A second
 * signal while stopping exits at once. When the process that started this one goes away (a terminal closed,
 * an `npm` or `npx` wrapper killed with SIGKILL), the command stops as if it had received SIGTERM, so nothing
 * is left running on its own.
 */

/** Timing of the lifecycle. */
export const LIFECYCLE_TIMING = {
  /** How often the parent process is checked. */
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
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly handlers: Array<[NodeJS.Signals, () => void]> = [];

  constructor(private readonly log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)) {
    this.stopRequested = new Promise((resolve) => (this.resolveStopRequested = resolve));
  }

  /** Listens for SIGINT and SIGTERM and watches the parent process. Call once, before starting anything. */
  listen(): this {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const handler = () => this.onSignal(signal);
      process.on(signal, handler);
      this.handlers.push([signal, handler]);
    }
    const parent = process.ppid;
    const timer = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(timer);
        if (this.signal !== undefined) return;
        this.log(`durable-tools: the parent process (${parent}) is gone; stopping.`);
        this.onSignal('SIGTERM');
      }
    }, LIFECYCLE_TIMING.parentCheckMs);
    timer.unref();
    this.timers.push(timer);
    return this;
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
      for (const timer of this.timers) clearInterval(timer);
      for (const [signal, handler] of this.handlers) process.off(signal, handler);
    })();
    return this.stopping;
  }

  private onSignal(signal: NodeJS.Signals): void {
    if (this.signal !== undefined) {
      this.log(`durable-tools: ${signal} again; exiting without waiting.`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    this.signal = signal;
    this.resolveStopRequested(signal);
  }
}
