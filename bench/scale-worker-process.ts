/**
 * The parent's handle on a bench:scale worker process (bench/scale-worker.ts): start it, read its RSS and CPU
 * from /proc and its SDK metrics from its Prometheus endpoint, ask it for its memory after a garbage collection,
 * stop it. `SCALE_WORKER_NODE_ARGS` adds Node flags to the worker (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`);
 * `SCALE_HEAP_SNAPSHOTS=<dir>` has it write a heap snapshot of its main thread at each memory reading.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { processCpuMs } from './peers/peer-systems';
import { serviceNode } from './peers/service-process';
import { SCALE_WORKER_ENV, type ScaleWorkerConfig } from './scale-worker';

/** A running worker process. */
export interface ScaleWorkerProcess {
  pid: number;
  /** Resident set size, KB (VmRSS); 0 once the process is gone. */
  rssKb(): number;
  /** CPU time (user + system) so far, ms. */
  cpuMs(): number;
  /** CPU time so far by thread group, ms (see {@link threadGroupCpuMs}). */
  threadCpuMs(): ThreadCpu;
  /** The SDK's metrics, Prometheus text. */
  metrics(): Promise<string>;
  /** Its memory after a full garbage collection of its main thread (the workflow threads collect on their own). */
  memory(): Promise<WorkerMemory>;
  stop(): Promise<void>;
}

/** What {@link ScaleWorkerProcess.memory} answers, KB. */
export interface WorkerMemory {
  rssKb: number;
  /** The main thread's V8 heap in use after `gc()`: activities, stores, the SDK's bridge. */
  heapUsedKb: number;
  /** Memory outside the V8 heap held by its objects (Buffers, ArrayBuffers: payloads, gRPC), after `gc()`. */
  externalKb: number;
}

/**
 * A worker process's CPU by thread: its main thread (the activities, the stores, the SDK's bridge to its core),
 * Temporal's core (its Rust runtime's threads, `tokio-*`), and the other threads (the workflow threads, V8's
 * garbage collection helpers, libuv's pool: Node 20 names them all `node`).
 */
export interface ThreadCpu {
  main: number;
  core: number;
  other: number;
}

/** {@link ThreadCpu} of `pid` from `/proc/<pid>/task/<tid>/stat`, ms; zeros once the process is gone. */
export function threadGroupCpuMs(pid: number): ThreadCpu {
  const cpu: ThreadCpu = { main: 0, core: 0, other: 0 };
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return cpu;
  }
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    if (Number(tid) === pid) cpu.main += ms;
    else if (name.startsWith('tokio')) cpu.core += ms;
    else cpu.other += ms;
  }
  return cpu;
}

function vmRssKb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Starts bench/scale-worker.ts and resolves once it polls. */
export async function startScaleWorker(config: ScaleWorkerConfig): Promise<ScaleWorkerProcess> {
  const nodeArgs = process.env.SCALE_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(
    serviceNode(),
    [...nodeArgs, '--expose-gc', '--import', 'tsx', require.resolve('./scale-worker')],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, [SCALE_WORKER_ENV]: JSON.stringify(config) },
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([
    new Promise<void>((resolve) => child.once('message', () => resolve())),
    exited.then(() => {
      throw new Error('The bench:scale worker exited before it was ready.');
    }),
  ]);
  const pid = child.pid!;
  return {
    pid,
    rssKb: () => vmRssKb(pid),
    cpuMs: () => processCpuMs(pid),
    threadCpuMs: () => threadGroupCpuMs(pid),
    metrics: async () => (await fetch(`http://127.0.0.1:${config.metricsPort}/metrics`)).text(),
    memory: () =>
      new Promise<WorkerMemory>((resolve, reject) => {
        const onMessage = (message: { type?: string } & Partial<WorkerMemory>): void => {
          if (message.type !== 'memory') return;
          child.off('message', onMessage);
          resolve({ rssKb: message.rssKb!, heapUsedKb: message.heapUsedKb!, externalKb: message.externalKb! });
        };
        child.on('message', onMessage);
        const snapshotDir = process.env.SCALE_HEAP_SNAPSHOTS;
        if (!child.send({ type: 'memory', ...(snapshotDir ? { snapshotDir } : {}) }))
          reject(new Error('The bench:scale worker is gone.'));
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.disconnect();
      await exited;
      clearTimeout(timer);
    },
  };
}
