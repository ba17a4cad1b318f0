/**
 * The systems `npm run bench:peers` compares, each with the infrastructure it needs (started once per bench,
 * kept for all rounds) and how to read its server's CPU time. Every service process is started through
 * {@link PeerSystem.spec}; a crashed one is started again from the same spec.
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import { startDevServer, type DevServer } from '../../src/dev-server/dev-server';
import type { AgentRunInput } from '../../src/contract/agent-run-types';
import type { DurableToolsServiceConfig } from './durable-tools-service';
import type { DbosServiceConfig } from './dbos-service';
import type { RestateServiceConfig } from './restate-service';
import type { TemporalServiceConfig } from './temporal-service';
import type { PlainActivityKind } from './temporal-workflows';
import type { ServiceProcess, ServiceSpec } from './service-process';
import { engineBundleOptions } from '../../src/runtime/engine-bundle-options';

/**
 * Which column of the last line a system belongs to: `temporal` is plain Temporal with local activities (the
 * floor of the last line), `temporal-regular` the same workflow with regular activities (reported, not compared).
 */
export type PeerFamily = 'durable-tools' | 'restate' | 'dbos' | 'temporal' | 'temporal-regular';

/** One system of the bench, set up and ready for its service process. */
export interface PeerSystem {
  /** Name in the report, e.g. `restate (wal fsync off)`. */
  name: string;
  family: PeerFamily;
  /** What a service process of this system is started with. */
  spec: ServiceSpec;
  /** Called after each start of a service process (Restate registers its deployment the first time). */
  afterStart?(service: ServiceProcess): Promise<void>;
  /** CPU time (ms) the system's server processes used so far, by pid (the pid set may change). */
  serverCpuMs(): Promise<Map<number, number>>;
  /** What the server column measures, for the report. */
  serverLabel: string;
  close(): Promise<void>;
}

/** What every system is built from. */
export interface PeerBenchContext {
  ledgerUrl: string;
  steps: number;
  /** Scratch directory of this bench run. */
  dir: string;
  postgresUrl: string;
  /** Service processes' output (`ignore` unless debugging). */
  output: 'inherit' | 'ignore';
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system, ms) of a process from /proc/<pid>/stat; 0 when it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime); the slice starts at field 3.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * durable-tools on a Temporal dev server (the project's tuned one, in memory), one workflow bundle built for the
 * bench, the SQLite key store. `runInput` is merged into every run's input: a variant of the engine (the fast
 * path, once it lands) is one more call of this function with its own name and input.
 */
export async function durableToolsSystem(
  ctx: PeerBenchContext,
  variant: { name: string; runInput?: Partial<AgentRunInput>; service?: Partial<DurableToolsServiceConfig> } = {
    name: 'durable-tools',
  },
): Promise<PeerSystem> {
  const server: DevServer = await startDevServer({ ui: false });
  const slug = variant.name.replace(/[^a-z0-9]+/gi, '-');
  const bundlePath = join(ctx.dir, `${slug}-workflow-bundle.js`);
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    ...engineBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  writeFileSync(bundlePath, code);
  const config: DurableToolsServiceConfig = {
    address: server.address,
    namespace: server.namespace,
    taskQueue: `peers-${slug}`,
    bundlePath,
    storePath: join(ctx.dir, `${slug}-keys.sqlite`),
    ...(variant.runInput ? { runInput: variant.runInput } : {}),
    // PEERS_WORKFLOW_TASK_TIMEOUT=4s: the runs' workflow task timeout (docs/benchmarks.md, crash round).
    ...(process.env.PEERS_WORKFLOW_TASK_TIMEOUT
      ? { workflowTaskTimeout: process.env.PEERS_WORKFLOW_TASK_TIMEOUT }
      : {}),
    ...variant.service,
  };
  return {
    name: variant.name,
    family: 'durable-tools',
    spec: {
      script: require.resolve('./durable-tools-service'),
      config,
      ledgerUrl: ctx.ledgerUrl,
      steps: ctx.steps,
      output: ctx.output,
    },
    serverCpuMs: async () => new Map([[server.pid, processCpuMs(server.pid)]]),
    serverLabel: 'Temporal dev server',
    close: () => server.stop(),
  };
}

/**
 * Plain Temporal on the same tuned in-memory dev server as durable-tools: `plainLedgerRun`
 * (bench/peers/temporal-workflows.ts) with `kind` activities, a worker with the SDK's defaults, eager start.
 */
export async function temporalSystem(ctx: PeerBenchContext, kind: PlainActivityKind): Promise<PeerSystem> {
  const server: DevServer = await startDevServer({ ui: false });
  const bundlePath = join(ctx.dir, `temporal-${kind}-workflow-bundle.js`);
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./temporal-workflows'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  writeFileSync(bundlePath, code);
  const config: TemporalServiceConfig = {
    address: server.address,
    namespace: server.namespace,
    taskQueue: `peers-temporal-${kind}`,
    bundlePath,
    kind,
  };
  return {
    name: `temporal ${kind} activities`,
    family: kind === 'local' ? 'temporal' : 'temporal-regular',
    spec: {
      script: require.resolve('./temporal-service'),
      config,
      ledgerUrl: ctx.ledgerUrl,
      steps: ctx.steps,
      output: ctx.output,
    },
    serverCpuMs: async () => new Map([[server.pid, processCpuMs(server.pid)]]),
    serverLabel: 'Temporal dev server',
    close: () => server.stop(),
  };
}

/**
 * Restate: `restate-server` with its own scratch directory and ports, and the service process's endpoint on a
 * fixed port registered once through the admin API. `lowLatency` turns off the fsync of the local log's
 * write-ahead log (`bifrost.local.rocksdb-disable-wal-fsync`), its latency-for-durability setting.
 */
export async function restateSystem(ctx: PeerBenchContext, lowLatency: boolean): Promise<PeerSystem> {
  const [ingress, admin, node, endpoint] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const baseDir = join(ctx.dir, `restate-${lowLatency ? 'fast' : 'default'}`);
  mkdirSync(baseDir, { recursive: true });
  const binary = join(
    require.resolve('@restatedev/restate-server-linux-x64/package.json'),
    '..',
    'bin',
    'restate-server',
  );
  const server: ChildProcess = spawn(binary, [], {
    cwd: baseDir,
    stdio: ['ignore', 'ignore', 'ignore'],
    env: {
      ...process.env,
      RESTATE_BASE_DIR: baseDir,
      RESTATE_LISTEN_MODE: 'tcp',
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
      RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
      RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}/`,
      RESTATE_LOG_FILTER: 'error',
      ...(lowLatency ? { RESTATE_BIFROST__LOCAL__ROCKSDB_DISABLE_WAL_FSYNC: 'true' } : {}),
    },
  });
  const adminUrl = `http://127.0.0.1:${admin}`;
  await waitUntil(`restate-server on ${adminUrl}`, async () => (await fetch(`${adminUrl}/health`)).ok);
  await waitUntil(`restate ingress on ${ingress}`, async () => {
    const response = await fetch(`http://127.0.0.1:${ingress}/restate/health`);
    return response.ok;
  });
  const config: RestateServiceConfig = { endpointPort: endpoint, ingressUrl: `http://127.0.0.1:${ingress}` };
  let registered = false;
  return {
    name: lowLatency ? 'restate (wal fsync off)' : 'restate',
    family: 'restate',
    spec: {
      script: require.resolve('./restate-service'),
      config,
      ledgerUrl: ctx.ledgerUrl,
      steps: ctx.steps,
      output: ctx.output,
    },
    async afterStart() {
      if (registered) return;
      const response = await fetch(`${adminUrl}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri: `http://127.0.0.1:${endpoint}` }),
      });
      if (!response.ok) throw new Error(`Restate refused the deployment: ${response.status} ${await response.text()}`);
      registered = true;
    },
    serverCpuMs: async () => new Map([[server.pid!, processCpuMs(server.pid!)]]),
    serverLabel: 'restate-server',
    close: () => stopChild(server),
  };
}

/**
 * DBOS on the local Postgres, in a database of its own created here and dropped at `close`. `lowLatency` sets
 * that database's `synchronous_commit = off` (Postgres's asynchronous commit: a commit returns before its WAL
 * is flushed) and a system-database pool sized for the 20 concurrent runs.
 */
export async function dbosSystem(ctx: PeerBenchContext, lowLatency: boolean): Promise<PeerSystem> {
  const database = `peers_dbos_${process.pid}_${lowLatency ? 'fast' : 'default'}`;
  const admin = new PgClient({ connectionString: ctx.postgresUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${database}`);
  if (lowLatency) await admin.query(`ALTER DATABASE ${database} SET synchronous_commit = off`);
  const url = new URL(ctx.postgresUrl);
  url.pathname = `/${database}`;
  const config: DbosServiceConfig = { systemDatabaseUrl: url.toString(), ...(lowLatency ? { poolSize: 30 } : {}) };
  return {
    name: lowLatency ? 'dbos (synchronous_commit off)' : 'dbos',
    family: 'dbos',
    spec: {
      script: require.resolve('./dbos-service'),
      config,
      ledgerUrl: ctx.ledgerUrl,
      steps: ctx.steps,
      output: ctx.output,
    },
    async serverCpuMs() {
      const { rows } = await admin.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      return new Map(rows.map(({ pid }) => [pid, processCpuMs(pid)]));
    },
    serverLabel: 'Postgres backends of its database',
    async close() {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    },
  };
}

/** CPU used between two {@link PeerSystem.serverCpuMs} readings (a pid new in `after` counts from 0). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not come up in 120 s.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
