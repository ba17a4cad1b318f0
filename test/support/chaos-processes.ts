import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChaosPauseMoment } from './chaos-tools';
import { killNow } from './netns-network';
import { CHAOS_WORKER_DEFAULTS, CHAOS_WORKER_ENV, CHAOS_WORKER_READY, type ChaosPauseCommand } from './chaos-worker';

/** Where a chaos run's worker processes connect. */
export interface ChaosWorkerTarget {
  address: string;
  namespace: string;
  bundlePath: string;
  taskQueue: string;
  ledgerUrl: string;
  workDir: string;
}

/** Timing of the worker processes. */
export const CHAOS_PROCESS_SETTINGS = {
  /** A loaded machine (stress mode, other users) can take a minute or more to start a worker. */
  workerReadyTimeoutMs: 240_000,
  /** Graceful stop of the last workers before they are killed. */
  workerStopGraceMs: 10_000,
} as const;

const REPO_ROOT = resolve(__dirname, '..', '..');
const CHAOS_WORKER_SCRIPT = join(__dirname, 'chaos-worker.ts');

/** One worker process. */
export interface ChaosWorker {
  generation: number;
  child: ChildProcess;
  pid: number;
  exited: Promise<void>;
  killedByUs: boolean;
  paused: boolean;
}

/** A worker process that exited without the harness killing or stopping it. */
export interface ChaosWorkerDeath {
  generation: number;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The first line of its stderr that names a fatal error (e.g. `async hook stack has become corrupted`), if any. */
  cause?: string;
}

/**
 * The worker processes of one chaos run. Each `start()` adds a new generation; kill mode keeps one at a
 * time, pause mode two (one is stopped while the other takes over). Every process it started is SIGCONTed
 * and killed by `stop()`, and by an exit hook if the harness itself ends first.
 */
export class ChaosWorkers {
  generation = 0;
  readonly live: ChaosWorker[] = [];
  /** Workers that exited by themselves (not killed or stopped by the harness), in order. */
  readonly deaths: ChaosWorkerDeath[] = [];
  private readonly logFile: WriteStream;
  private diedListener: (() => void) | undefined;
  private readonly killAllOnExit = (): void => {
    for (const worker of this.live) killNow(worker.pid);
  };

  constructor(
    private readonly target: ChaosWorkerTarget,
    private readonly log: (line: string) => void,
    private readonly pausePoints = false,
  ) {
    this.logFile = createWriteStream(join(target.workDir, 'chaos-worker.log'), { flags: 'a' });
    process.once('exit', this.killAllOnExit);
  }

  /** Resolves when a worker exits without being killed by us. */
  readonly died = (): Promise<void> =>
    new Promise((resolveDied) => {
      this.diedListener = resolveDied;
    });

  /** Starts the next worker generation and waits until it polls. */
  async start(): Promise<ChaosWorker> {
    const startedAt = Date.now();
    this.generation += 1;
    const generation = this.generation;
    const env = CHAOS_WORKER_ENV;
    const { target } = this;
    this.logFile.write(`--- worker generation ${generation} ---\n`);
    // `node --import tsx` directly (no npx / tsx wrapper): the pid is the process that runs the worker.
    const child = spawn(process.execPath, ['--import', 'tsx', CHAOS_WORKER_SCRIPT], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        [env.address]: target.address,
        [env.namespace]: target.namespace,
        [env.taskQueue]: target.taskQueue,
        [env.bundlePath]: target.bundlePath,
        [env.ledgerUrl]: target.ledgerUrl,
        [env.keysPath]: join(target.workDir, 'idempotency.sqlite'),
        [env.transcriptsPath]: join(target.workDir, 'transcripts.sqlite'),
        [env.leaseMs]: String(CHAOS_WORKER_DEFAULTS.leaseMs),
        [env.thinkMs]: String(CHAOS_WORKER_DEFAULTS.thinkMs),
        [env.pausePoints]: this.pausePoints ? '1' : '0',
      },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const worker: ChaosWorker = {
      generation,
      child,
      pid: child.pid!,
      exited: Promise.resolve(),
      killedByUs: false,
      paused: false,
    };
    const fatal = new FatalLineWatch();
    worker.exited = new Promise<void>((resolveExit) =>
      child.once('exit', (code, signal) => {
        const byUs = worker.killedByUs ? '' : ' BY ITSELF';
        this.logFile.write(`--- worker generation ${generation} exited${byUs} (code ${code}, signal ${signal}) ---\n`);
        const index = this.live.indexOf(worker);
        if (index >= 0) this.live.splice(index, 1);
        if (!worker.killedByUs) {
          const cause = fatal.line;
          this.deaths.push({ generation, pid: worker.pid, code, signal, ...(cause ? { cause } : {}) });
          this.log(
            `chaos: WORKER DEATH: generation ${generation} (pid ${worker.pid}) exited by itself ` +
              `(code ${code}, signal ${signal})${cause ? `: ${cause}` : ''}`,
          );
          this.diedListener?.();
        }
        resolveExit();
      }),
    );
    child.on('error', () => undefined); // IPC to a process that just died
    this.live.push(worker);
    child.stderr!.on('data', (chunk: Buffer) => fatal.feed(chunk));
    child.stderr!.pipe(this.logFile, { end: false });
    await this.ready(worker, startedAt);
    return worker;
  }

  /** SIGKILLs the oldest worker and waits until it is gone. */
  async kill(): Promise<void> {
    const worker = this.live[0];
    if (!worker) return;
    worker.killedByUs = true;
    killNow(worker.pid);
    await worker.exited;
  }

  /** Stops `worker` with SIGSTOP now; false when it is already gone (it died in the meantime). */
  pause(worker: ChaosWorker): boolean {
    if (!this.live.includes(worker)) return false;
    try {
      process.kill(worker.pid, 'SIGSTOP');
    } catch {
      return false;
    }
    worker.paused = true;
    return true;
  }

  /** Arms a pause moment inside the worker's tools: the next call (of `tool`, if given) reaching it stops the worker there. */
  arm(worker: ChaosWorker, moment: ChaosPauseMoment | null, tool?: string): void {
    if (worker.child.connected) {
      worker.child.send({ arm: moment, ...(tool !== undefined ? { tool } : {}) } satisfies ChaosPauseCommand);
    }
  }

  /** Whether the worker's process is stopped (state `T` in /proc). */
  isStopped(worker: ChaosWorker): boolean {
    const stopped = processStopped(worker.pid);
    if (stopped) worker.paused = true;
    return stopped;
  }

  /** Lets a stopped worker run again. */
  resume(worker: ChaosWorker): void {
    worker.paused = false;
    try {
      process.kill(worker.pid, 'SIGCONT');
    } catch {
      // already gone
    }
  }

  /** Stops every worker gracefully (SIGCONT, then SIGTERM), killing those that do not stop in time. */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.live].map(async (worker) => {
        worker.killedByUs = true;
        this.resume(worker);
        worker.child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const stopped = await Promise.race([
          worker.exited.then(() => true),
          new Promise<boolean>((resolveLate) => {
            timer = setTimeout(() => resolveLate(false), CHAOS_PROCESS_SETTINGS.workerStopGraceMs);
          }),
        ]);
        clearTimeout(timer);
        if (!stopped) {
          this.log(`chaos: worker generation ${worker.generation} did not stop on SIGTERM; killing it`);
          killNow(worker.pid);
          await worker.exited;
        }
      }),
    );
    process.off('exit', this.killAllOnExit);
    await new Promise<void>((resolveClosed) => this.logFile.end(resolveClosed));
  }

  private ready(worker: ChaosWorker, startedAt: number): Promise<void> {
    const { child } = worker;
    return new Promise<void>((resolveReady, reject) => {
      let output = '';
      const timer = setTimeout(
        () =>
          reject(new Error(`The chaos worker did not start within ${CHAOS_PROCESS_SETTINGS.workerReadyTimeoutMs} ms.`)),
        CHAOS_PROCESS_SETTINGS.workerReadyTimeoutMs,
      );
      const onExit = (code: number | null): void => {
        clearTimeout(timer);
        reject(
          new Error(
            `The chaos worker exited (code ${code}) before it was ready; see ${this.target.workDir}/chaos-worker.log`,
          ),
        );
      };
      child.once('exit', onExit);
      child.stdout!.on('data', (chunk: Buffer) => {
        this.logFile.write(chunk);
        if (output.includes(CHAOS_WORKER_READY)) return;
        output += chunk.toString('utf8');
        if (output.includes(CHAOS_WORKER_READY)) {
          clearTimeout(timer);
          child.off('exit', onExit);
          this.log(
            `chaos: worker generation ${worker.generation} (pid ${worker.pid}) ready in ${Date.now() - startedAt} ms`,
          );
          resolveReady();
        }
      });
    });
  }
}

/**
 * Busy-loop processes, one per core, for the stress mode: they saturate every core for the whole run.
 * `stop()` kills them (an exit hook does too if the harness ends first).
 */
export class BusyLoops {
  private readonly children: ChildProcess[] = [];
  private readonly killAllOnExit = (): void => {
    for (const child of this.children) if (child.pid) killNow(child.pid);
  };

  constructor(count = cpus().length) {
    for (let i = 0; i < count; i++) {
      this.children.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    }
    process.once('exit', this.killAllOnExit);
  }

  get count(): number {
    return this.children.length;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolveExit) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolveExit();
            child.once('exit', () => resolveExit());
            killNow(child.pid!);
          }),
      ),
    );
    process.off('exit', this.killAllOnExit);
  }
}

/** Remembers the first stderr line of a worker that names a fatal error (what it died of, if it dies). */
class FatalLineWatch {
  line: string | undefined;
  private tail = '';

  feed(chunk: Buffer): void {
    if (this.line !== undefined) return;
    const lines = (this.tail + chunk.toString('utf8')).split('\n');
    this.tail = (lines.pop() ?? '').slice(-2_000);
    this.line = lines
      .find((line) => FATAL_LINE.test(line))
      ?.trim()
      .slice(0, 300);
  }
}

/** Lines that name why a process is about to die (Node's fatal errors, V8's, an uncaught error). */
const FATAL_LINE =
  /async hook stack has become corrupted|FATAL ERROR|Segmentation fault|^\s*#\s*Fatal|Uncaught|chaos-worker failed/;

function processStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ...: the state follows the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 't';
  } catch {
    return false;
  }
}
