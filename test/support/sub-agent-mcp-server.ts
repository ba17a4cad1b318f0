import { createToolRegistry, type ToolRegistry } from '../../src/tools/tool-registry';
import { startLedgerServer, type LedgerServer } from './ledger-server';
import { useMcpTestListener, type McpTestListener } from './mcp-test-listener';
import { subAgentTools } from './sub-agent-tools';
import { createTestWorker, uniqueTaskQueue, useTestTemporal, type TestTemporal } from './temporal-test-env';

/** What {@link useSubAgentMcpServer} set up for the test file. */
export interface SubAgentMcpServer {
  temporal: TestTemporal;
  mcp: McpTestListener;
  /** The ledger the sub-agent tools book on (once the beforeAll hooks ran). */
  ledger(): LedgerServer;
}

/**
 * For the test file: a worker of the sub-agent tools (test/support/sub-agent-tools.ts) on a task queue of its own,
 * booking on a fresh test ledger (closed after the file), and a durable MCP listener of those tools with `listener`'s
 * tokens and approval rules.
 */
export function useSubAgentMcpServer(
  name: string,
  listener: Omit<Parameters<typeof useMcpTestListener>[1], 'taskQueue' | 'catalog'>,
): SubAgentMcpServer {
  let ledger: LedgerServer | undefined;
  let registry: ToolRegistry | undefined;
  const taskQueue = uniqueTaskQueue(name);
  const temporal = useTestTemporal({
    worker: async (connected) => {
      ledger = await startLedgerServer();
      registry = createToolRegistry(subAgentTools(ledger.url));
      return createTestWorker(connected, { tools: registry.list(), taskQueue });
    },
  });
  const mcp = useMcpTestListener(temporal, { ...listener, taskQueue, catalog: () => registry!.catalog() });
  afterAll(async () => {
    await ledger?.close();
  });
  return {
    temporal,
    mcp,
    ledger: () => {
      if (!ledger) throw new Error('The ledger is started only once the beforeAll hooks run.');
      return ledger;
    },
  };
}
