import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { resolveTemporalServer, type ResolveTemporalServerOptions } from './cluster-build';
import {
  CLUSTER_SERVICES,
  clusterConfigYaml,
  clusterDynamicConfig,
  clusterDynamicConfigYaml,
  type ClusterPostgres,
  type ClusterServiceName,
  type ClusterServicePorts,
} from './cluster-config';
import { TemporalClusterError } from './cluster-error';
import { ensureClusterSchema, recentClusterMembers } from './cluster-schema';
import { isPortOpen } from './free-port';

/** How long the cluster may take to answer, and how often we ask. */
export const CLUSTER_TIMING = {
  readyTimeoutMs: 180_000,
  pollIntervalMs: 250,
  stopTimeoutMs: 20_000,
} as const;

/** Defaults of {@link startTemporalCluster}. */
export const CLUSTER_DEFAULTS = {
  postgres: { host: '127.0.0.1', port: 5432, user: 'postgres' },
  database: 'temporal_cluster',
  bindAddress: '127.0.0.1',
  namespace: 'default',
  numHistoryShards: 4,
  /** Retention of closed runs in the namespace the cluster registers. */
  retentionDays: 3,
} as const;

/** Options of {@link startTemporalCluster}. */
export interface TemporalClusterOptions {
  /** The PostgreSQL server (default 127.0.0.1:5432, user `postgres`, no password: the local trust setup). */
  postgres?: Partial<ClusterPostgres>;
  /**
   * Database of the server's state (default `temporal_cluster`); visibility goes to `<database>_visibility`. Both
   * are created and their schemas brought up to date with Temporal's schema tool; an existing one keeps its runs.
   * Two clusters running at once need two databases.
   */
  database?: string;
  /**
   * The IP address every service binds to and announces to its peers (default 127.0.0.1): another address of this
   * machine makes the frontend reachable from worker hosts in network namespaces.
   */
  bindAddress?: string;
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
  /**
   * First of the cluster's ports: frontend gRPC `basePort`, history +1, matching +2, worker +3, frontend HTTP +10,
   * membership +100..+103. Default: free ports chosen at start.
   */
  basePort?: number;
  /** Directory of the generated configuration and the services' logs (default: a new temporary directory). */
  dataDir?: string;
  /** Namespace registered and returned (default `default`). */
  namespace?: string;
  /** Start with the dev server's tuning (TUNED_DEV_SERVER_CONFIG; default true). */
  tuned?: boolean;
  /** More dynamic config, e.g. `{ 'history.transferProcessorMaxPollRPS': 20 }`. */
  dynamicConfig?: Readonly<Record<string, string | number | boolean>>;
  /** Server log level in the log files (default `warn`). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Finding or building the server (`build: false` fails instead of building). */
  server?: ResolveTemporalServerOptions;
  /** Aborting it while the cluster starts (a Ctrl-C) stops the services started so far and rejects. */
  signal?: AbortSignal;
}

/** A running cluster: four server processes on PostgreSQL. */
export interface TemporalCluster {
  /** `host:port` of the frontend, for `TEMPORAL_ADDRESS`. */
  address: string;
  namespace: string;
  /** The cluster runs no web UI; a Temporal UI server can be pointed at {@link TemporalCluster.address}. */
  uiAddress?: string;
  /** Where the configuration (`config/`) and the services' logs (`logs/<service>.log`) are. */
  dataDir: string;
  /** Process id of each service, as of now. */
  pids(): Record<ClusterServiceName, number>;
  /**
   * Stops one service (SIGTERM, SIGKILL after a grace period; `kill: true` sends SIGKILL at once), starts it again
   * and waits until it serves: the others keep running, as when an operator restarts one host of a cluster.
   */
  restartService(name: ClusterServiceName, options?: { kill?: boolean }): Promise<void>;
  /** Stops every service (frontend first, history last); the databases keep their state. */
  stop(): Promise<void>;
}

/**
 * Starts a Temporal cluster on the local PostgreSQL: the server built from Go modules ({@link resolveTemporalServer},
 * cached outside the repository), its databases set up with Temporal's schema tool, the frontend, history, matching
 * and worker services each in its own process, the namespace and the engine's search attributes registered. Resolves
 * once the frontend serves the namespace, history answers for it and matching answers for a task queue.
 *
 * @example
 * ```ts
 * const cluster = await startTemporalCluster({ database: 'temporal_cluster' });
 * console.log(cluster.address); // 127.0.0.1:40123
 * await cluster.restartService('history');
 * await cluster.stop();
 * ```
 */
export async function startTemporalCluster(options: TemporalClusterOptions = {}): Promise<TemporalCluster> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const install = await resolveTemporalServer({ log, ...options.server });
  const postgres: ClusterPostgres = { ...CLUSTER_DEFAULTS.postgres, ...options.postgres };
  const database = options.database ?? CLUSTER_DEFAULTS.database;
  const databases = { database, visibilityDatabase: `${database}_visibility` };
  const bindAddress = options.bindAddress ?? CLUSTER_DEFAULTS.bindAddress;
  const namespace = options.namespace ?? CLUSTER_DEFAULTS.namespace;

  const running = await liveMembers(postgres, database);
  if (running.length > 0) {
    throw new TemporalClusterError(
      `A Temporal cluster is running on database ${database} (its services answer at ${running.join(', ')}). ` +
        'Stop it, or start this one on another database (option `database`, `npm run cluster -- --database NAME`).',
      'SERVER_FAILED',
    );
  }
  const schemaStarted = Date.now();
  for (const line of await ensureClusterSchema(install.sqlToolPath, install.schemaDir, postgres, databases)) {
    log(`durable-tools: ${line}`);
  }
  log(`durable-tools: schemas ready in ${seconds(schemaStarted)}`);

  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), 'temporal-cluster-')));
  mkdirSync(join(dataDir, 'config'), { recursive: true });
  mkdirSync(join(dataDir, 'logs'), { recursive: true });
  const ports = await choosePorts(bindAddress, options.basePort);
  const dynamicConfigFile = join(dataDir, 'config', 'dynamicconfig.yaml');
  writeFileSync(
    dynamicConfigFile,
    clusterDynamicConfigYaml(clusterDynamicConfig(options.tuned ?? true, options.dynamicConfig)),
  );
  writeFileSync(
    join(dataDir, 'config', 'cluster.yaml'),
    clusterConfigYaml({
      bindAddress,
      ports: ports.services,
      frontendHttpPort: ports.frontendHttp,
      postgres,
      ...databases,
      numHistoryShards: CLUSTER_DEFAULTS.numHistoryShards,
      dynamicConfigFile,
      ...(options.logLevel ? { logLevel: options.logLevel } : {}),
    }),
  );

  const address = `${bindAddress}:${ports.services.frontend.grpc}`;
  const processes = new Map<ClusterServiceName, ChildProcess>();
  const spawnService = (name: ClusterServiceName) => {
    const logPath = join(dataDir, 'logs', `${name}.log`);
    const fd = openSync(logPath, 'a');
    // Its own process group: a Ctrl-C in the terminal reaches only the caller, which stops the services in order.
    const child = spawn(
      install.serverPath,
      ['--root', dataDir, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start', '--service', name],
      { cwd: dataDir, stdio: ['ignore', fd, fd], detached: true },
    );
    closeSync(fd);
    processes.set(name, child);
    return child;
  };
  const killAll = () => {
    for (const child of processes.values())
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  // A last resort when the caller exits without calling `stop`: no server left behind.
  process.once('exit', killAll);

  const probe = new ClusterProbe(address, namespace, dataDir);
  const alive = () => {
    if (options.signal?.aborted)
      throw new TemporalClusterError('Starting the Temporal cluster was aborted.', 'SERVER_FAILED');
    checkAlive(processes, dataDir);
  };
  try {
    const started = Date.now();
    // History first, alone: each service writes the cluster's metadata (its frontend address) at start, and four
    // writing at once lose to each other's version check and exit. The others then start together.
    const [first, ...rest] = CLUSTER_SERVICES;
    spawnService(first);
    await waitForPort(alive, first, bindAddress, listenPort(ports.services, first), dataDir);
    for (const name of rest) spawnService(name);
    await Promise.all(
      rest.map((name) => waitForPort(alive, name, bindAddress, listenPort(ports.services, name), dataDir)),
    );
    await probe.connect(alive);
    await probe.registerNamespace(alive);
    const registered = await probe.registerSearchAttributes(alive);
    if (registered.length > 0) log(`durable-tools: registered search attributes ${registered.join(', ')}`);
    await probe.waitFor('history', alive);
    await probe.waitFor('matching', alive);
    log(`durable-tools: Temporal cluster ready at ${address}, services started in ${seconds(started)}`);
  } catch (error) {
    killAll();
    process.off('exit', killAll);
    await probe.close();
    throw error;
  }

  return {
    address,
    namespace,
    dataDir,
    pids: () =>
      Object.fromEntries(CLUSTER_SERVICES.map((name) => [name, processes.get(name)?.pid ?? -1])) as Record<
        ClusterServiceName,
        number
      >,
    async restartService(name, restartOptions = {}) {
      const restartStarted = Date.now();
      const child = processes.get(name);
      if (child) await stopProcess(child, restartOptions.kill === true);
      spawnService(name);
      await waitForPort(alive, name, bindAddress, listenPort(ports.services, name), dataDir);
      if (name !== 'worker') await probe.waitFor(name, alive);
      log(`durable-tools: ${name} service restarted in ${seconds(restartStarted)}`);
    },
    async stop() {
      await probe.close();
      for (const name of ['frontend', 'worker', 'matching', 'history'] as const) {
        const child = processes.get(name);
        if (child) await stopProcess(child, false);
      }
      process.off('exit', killAll);
    },
  };
}

/**
 * The cluster's ports. Membership ports are stored in a `smallint` column of the cluster_membership table, so every
 * port is taken below 32768, where the kernel hands out no ephemeral ports; with no `basePort`, each is one that
 * nothing listens on at `host` right now.
 */
async function choosePorts(
  host: string,
  basePort?: number,
): Promise<{ services: Record<ClusterServiceName, ClusterServicePorts>; frontendHttp: number }> {
  const offsets: Record<ClusterServiceName, number> = { frontend: 0, history: 1, matching: 2, worker: 3 };
  const taken = new Set<number>();
  const free = async () => {
    const port = await findFreeLowPort(host, taken);
    taken.add(port);
    return port;
  };
  const services = {} as Record<ClusterServiceName, ClusterServicePorts>;
  for (const name of CLUSTER_SERVICES) {
    services[name] =
      basePort === undefined
        ? { grpc: await free(), membership: await free() }
        : { grpc: basePort + offsets[name], membership: basePort + 100 + offsets[name] };
  }
  return { services, frontendHttp: basePort === undefined ? await free() : basePort + 10 };
}

/** Lowest and highest port {@link findFreeLowPort} tries: below Linux's ephemeral range (32768–60999). */
const LOW_PORTS = { from: 20_000, to: 32_000 } as const;

/** A port in {@link LOW_PORTS} that can be bound on `host` now and is not in `taken`. */
async function findFreeLowPort(host: string, taken: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW_PORTS.from + Math.floor(Math.random() * (LOW_PORTS.to - LOW_PORTS.from));
    if (!taken.has(port) && (await canListen(port, host))) return port;
  }
  throw new TemporalClusterError(
    `No free port between ${LOW_PORTS.from} and ${LOW_PORTS.to} on ${host}; pass basePort.`,
    'SERVER_FAILED',
  );
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', () => resolvePromise(false));
    server.listen(port, host, () => server.close(() => resolvePromise(true)));
  });
}

/** The membership addresses of services that heartbeated on `database` lately and still accept connections. */
async function liveMembers(postgres: ClusterPostgres, database: string): Promise<string[]> {
  const live: string[] = [];
  for (const { host, port } of await recentClusterMembers(postgres, database)) {
    if (await isPortOpen(port, host)) live.push(`${host}:${port}`);
  }
  return live;
}

/** The port that shows a service is up: gRPC, except for the worker service, which serves none (membership). */
function listenPort(ports: Record<ClusterServiceName, ClusterServicePorts>, name: ClusterServiceName): number {
  return name === 'worker' ? ports.worker.membership : ports[name].grpc;
}

/** Throws when a service process has exited (with the end of its log), for the waits below. */
function checkAlive(processes: Map<ClusterServiceName, ChildProcess>, dataDir: string): void {
  for (const [name, child] of processes) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new TemporalClusterError(
        `The Temporal ${name} service exited (${child.exitCode ?? child.signalCode}) before the cluster was ready.` +
          logTail(join(dataDir, 'logs', `${name}.log`)),
        'SERVER_FAILED',
      );
    }
  }
}

async function waitForPort(
  alive: () => void,
  name: ClusterServiceName,
  host: string,
  port: number,
  dataDir: string,
): Promise<void> {
  await until(`the ${name} service listens on ${host}:${port}`, dataDir, async () => {
    alive();
    return isPortOpen(port, host);
  });
}

/** Polls `check` until it is true; fails after {@link CLUSTER_TIMING.readyTimeoutMs} saying what was awaited. */
async function until(what: string, dataDir: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + CLUSTER_TIMING.readyTimeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      if (error instanceof TemporalClusterError) throw error;
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, CLUSTER_TIMING.pollIntervalMs));
  }
  throw new TemporalClusterError(
    `Waited ${CLUSTER_TIMING.readyTimeoutMs / 1000} s for ${what}, in vain` +
      `${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}. Logs: ${join(dataDir, 'logs')}`,
    'SERVER_FAILED',
  );
}

const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;

/** The frontend connection used to set the cluster up and to tell when each service serves. */
class ClusterProbe {
  private connection: Connection | undefined;

  constructor(
    private readonly address: string,
    private readonly namespace: string,
    private readonly dataDir: string,
  ) {}

  async connect(alive: () => void): Promise<void> {
    await until(`the frontend at ${this.address}`, this.dataDir, async () => {
      alive();
      const connection = await Connection.connect({ address: this.address, connectTimeout: 2000 });
      try {
        await connection.workflowService.getSystemInfo({});
      } catch (error) {
        await connection.close();
        throw error;
      }
      this.connection = connection;
      return true;
    });
  }

  private get service(): Connection {
    if (!this.connection) throw new Error('ClusterProbe used before connect');
    return this.connection;
  }

  /** Registers the namespace; an existing one (a database reused) is kept as it is. */
  async registerNamespace(alive: () => void): Promise<void> {
    await until(`registering namespace ${this.namespace}`, this.dataDir, async () => {
      alive();
      try {
        await this.service.workflowService.registerNamespace({
          namespace: this.namespace,
          workflowExecutionRetentionPeriod: msToTs(`${CLUSTER_DEFAULTS.retentionDays} days`),
        });
      } catch (error) {
        if ((error as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw error;
      }
      await this.service.workflowService.describeNamespace({ namespace: this.namespace });
      return true;
    });
  }

  /** Adds the engine's search attributes the namespace lacks; returns their names. */
  async registerSearchAttributes(alive: () => void): Promise<string[]> {
    const operator = this.service.operatorService;
    let added: string[] = [];
    await until(`registering search attributes in namespace ${this.namespace}`, this.dataDir, async () => {
      alive();
      const listed = await operator.listSearchAttributes({ namespace: this.namespace });
      const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
      for (const key of Object.values(SEARCH_ATTRIBUTES)) {
        if (key.name in (listed.customAttributes ?? {})) continue;
        missing[key.name] =
          key.type === 'KEYWORD_LIST'
            ? temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
            : temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
      }
      if (Object.keys(missing).length > 0) {
        await operator.addSearchAttributes({ namespace: this.namespace, searchAttributes: missing });
        added = [...added, ...Object.keys(missing)];
      }
      return true;
    });
    return added;
  }

  /**
   * Waits until a service answers through the frontend: history says a made-up run does not exist (rather than
   * that the namespace is unknown or no host owns the shard), matching describes a task queue, the frontend
   * describes the namespace.
   */
  async waitFor(name: Exclude<ClusterServiceName, 'worker'>, alive: () => void): Promise<void> {
    const workflow = this.service.workflowService;
    await until(`the ${name} service to serve namespace ${this.namespace}`, this.dataDir, async () => {
      alive();
      if (name === 'frontend') {
        await workflow.describeNamespace({ namespace: this.namespace });
      } else if (name === 'matching') {
        await workflow.describeTaskQueue({
          namespace: this.namespace,
          taskQueue: { name: 'durable-tools-cluster-probe' },
          taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        });
      } else {
        try {
          await workflow.describeWorkflowExecution({
            namespace: this.namespace,
            execution: { workflowId: `durable-tools-cluster-probe-${randomUUID()}` },
          });
        } catch (error) {
          const { code, message } = error as { code?: number; message?: string };
          if (code !== GRPC_NOT_FOUND || /namespace/i.test(message ?? '')) throw error;
        }
      }
      return true;
    });
  }

  async close(): Promise<void> {
    await this.connection?.close();
    this.connection = undefined;
  }
}

function stopProcess(child: ChildProcess, kill: boolean): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), CLUSTER_TIMING.stopTimeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolvePromise();
    });
    child.kill(kill ? 'SIGKILL' : 'SIGTERM');
  });
}

function seconds(sinceMs: number): string {
  return `${((Date.now() - sinceMs) / 1000).toFixed(1)} s`;
}

function logTail(path: string): string {
  try {
    // The server logs JSON lines with stack traces: the first 400 characters of each say what happened.
    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .slice(-8)
      .map((line) => (line.length > 400 ? `${line.slice(0, 400)}...` : line));
    return `\nLast lines of ${path}:\n${lines.join('\n')}`;
  } catch {
    return '';
  }
}
