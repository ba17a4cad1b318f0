/**
 * The parent's handle on a bench:scale worker process (bench/scale-worker.ts): start it, read its RSS and CPU
 * from /proc and its SDK metrics from its Prometheus endpoint, ask it for its memory after a garbage collection,
 * stop it. `SCALE_WORKER_NODE_ARGS` adds Node flags to the worker (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
    metrics: async () => (await fetch(`http://127.0.0.1:${config.metricsPort}/metrics`)).text(),
    memory: () =>
      new Promise<WorkerMemory>((resolve, reject) => {
        const onMessage = (message: { type?: string } & Partial<WorkerMemory>): void => {
          if (message.type !== 'memory') return;
          child.off('message', onMessage);
          resolve({ rssKb: message.rssKb!, heapUsedKb: message.heapUsedKb!, externalKb: message.externalKb! });
        };
        child.on('message', onMessage);
        if (!child.send({ type: 'memory' })) reject(new Error('The bench:scale worker is gone.'));
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
