/**
 * A worker process for the MCP task crash test, run as `node --import tsx test/support/mcp-task-worker.ts` so
 * that a SIGKILL of its pid kills the worker itself. Its only tools are those of one Streamable HTTP MCP server
 * (`research`, trusted; runs may waive approvals); its idempotency keys and transcripts (where checkpoints are stored) are SQLite files the
 * next worker opens too. Prints {@link MCP_TASK_WORKER_READY} once polling; runs until killed.
 */
import type { McpServersConfigInput } from '../../src/mcp/client/mcp-config';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';

/** Environment variables the MCP task worker reads. */
export const MCP_TASK_WORKER_ENV = workerProcessEnv('DT_MCPTASK', { mcpUrl: 'MCP_URL' });

/** The line the worker prints when it starts polling. */
export const MCP_TASK_WORKER_READY = 'mcp-task-worker ready';

/** Lease of a key while a call runs: short, so the next worker takes over soon after a kill. */
export const MCP_TASK_WORKER_LEASE_MS = 1500;

/** This script, for `spawnTestWorkerProcess`. */
export const MCP_TASK_WORKER = { script: __filename, env: MCP_TASK_WORKER_ENV, ready: MCP_TASK_WORKER_READY };

/** The MCP configuration of the crash test's workers: a killed worker is noticed after 3 s of silence. */
export function mcpTaskWorkerConfig(url: string): McpServersConfigInput {
  return { mcpServers: { research: { url, trust: 'trusted', tasks: { heartbeatTimeoutMs: 3_000 } } } };
}

if (require.main === module) {
  runWorkerProcess('mcp-task-worker', MCP_TASK_WORKER_ENV, (required) => ({
    mcp: mcpTaskWorkerConfig(required(MCP_TASK_WORKER_ENV.mcpUrl)),
    leaseMs: MCP_TASK_WORKER_LEASE_MS,
    approvals: { allowRunsToWaive: true },
  }));
}
