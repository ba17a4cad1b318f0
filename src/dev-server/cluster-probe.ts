import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import type { ClusterServiceName } from './cluster-config';
import { TemporalClusterError } from './cluster-error';

/** How long the cluster may take to answer, and how often we ask. */
export const CLUSTER_TIMING = {
  readyTimeoutMs: 180_000,
  pollIntervalMs: 250,
  stopTimeoutMs: 20_000,
} as const;

/**
 * Polls `check` until it is true (its other errors are retried, a {@link TemporalClusterError} ends the wait); fails
 * after {@link CLUSTER_TIMING.readyTimeoutMs} saying what was awaited and where the logs are.
 */
export async function waitUntil(what: string, dataDir: string, check: () => Promise<boolean>): Promise<void> {
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
export class ClusterProbe {
  private connection: Connection | undefined;

  constructor(
    private readonly address: string,
    private readonly namespace: string,
    private readonly dataDir: string,
  ) {}

  /** Connects to the frontend, retrying until it answers `getSystemInfo`; `alive` throws when a service died. */
  async connect(alive: () => void): Promise<void> {
    await waitUntil(`the frontend at ${this.address}`, this.dataDir, async () => {
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
  async registerNamespace(alive: () => void, retentionDays: number): Promise<void> {
    await waitUntil(`registering namespace ${this.namespace}`, this.dataDir, async () => {
      alive();
      try {
        await this.service.workflowService.registerNamespace({
          namespace: this.namespace,
          workflowExecutionRetentionPeriod: msToTs(`${retentionDays} days`),
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
    await waitUntil(`registering search attributes in namespace ${this.namespace}`, this.dataDir, async () => {
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
    await waitUntil(`the ${name} service to serve namespace ${this.namespace}`, this.dataDir, async () => {
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

  /** Closes the connection (a probe can connect again). */
  async close(): Promise<void> {
    await this.connection?.close();
    this.connection = undefined;
  }
}
