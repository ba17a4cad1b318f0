/**
 * The set-up of the in-process tracing tests: a worker on the test server whose spans go to an in-memory
 * exporter, and a client that starts runs in the caller's trace.
 */
import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { MeterProvider } from '@opentelemetry/api';
import { createWorker } from '../../src/runtime/create-worker';
import { tracingClientInterceptors } from '../../src/telemetry/client-tracing';
import type { WorkflowSpanInfo } from '../../src/telemetry/lean-workflow-spans';
import type { Tool } from '../../src/tools/define-tool';
import type { inMemoryTracing } from './in-memory-telemetry';
import { testServer, type TestTemporal } from './temporal-test-env';

/** What {@link inMemoryTracing} returns. */
export type InMemoryTracing = ReturnType<typeof inMemoryTracing>;

/** Options of {@link createTracedWorker}. */
export interface TracedWorkerOptions {
  tools: Tool[];
  taskQueue: string;
  /** The WorkflowInfo fields the workflow spans carry (the worker's default when absent). */
  workflowInfo?: WorkflowSpanInfo;
  /** Where the engine's metrics go (the global meter provider when absent). */
  meterProvider?: MeterProvider;
}

/**
 * A worker on the test server, stores in memory, whose spans go to `tracing`. No pre-built bundle: it bundles the
 * workflows with the tracing interceptors, as in production.
 */
export async function createTracedWorker(
  temporal: TestTemporal,
  tracing: InMemoryTracing,
  options: TracedWorkerOptions,
): Promise<Worker> {
  const { workflowInfo, meterProvider } = options;
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: options.tools,
    connection: temporal.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue: options.taskQueue },
    telemetry: {
      tracing: { spanProcessor: tracing.spanProcessor, ...(workflowInfo ? { workflowInfo } : {}) },
      ...(meterProvider ? { meterProvider } : {}),
    },
  });
  return worker;
}

/** A client of the test server that starts runs in the caller's trace, with `tracing`'s tracer provider. */
export async function createTracedClient(temporal: TestTemporal, tracing: InMemoryTracing): Promise<Client> {
  return new Client({
    connection: temporal.client.connection,
    namespace: testServer().namespace,
    interceptors: await tracingClientInterceptors({ tracerProvider: tracing.tracerProvider }),
  });
}
