import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { connectClient } from '../client';
import { connectionSettingsFromEnv } from '../connection-settings';
import { ensureLocalTemporal } from '../dev-server/local-temporal';
import { createIdempotencyStore } from '../idempotency/create-idempotency-store';
import { createToolRegistry, type ToolRegistry } from '../tools/tool-registry';
import { createTranscriptStore } from '../transcripts/create-transcript-store';
import { createWorker, loadToolsModule } from '../worker';
import { enableTypeScriptFor } from '../typescript-tools-module';
import { loadMcpConfigFile } from './mcp-config';
import { McpHost, withMcpTools } from './mcp-host';
import { startMcpHttpListener } from './mcp-http-listener';
import { createDurableMcpServer } from './mcp-server';

/** Usage of `npm run mcp` / `durable-tools mcp`. */
export const MCP_COMMAND_USAGE = `usage: durable-tools mcp (--stdio | --http [--port N] [--host H]) [--no-worker] [--allow-host H:P]... [--allow-origin O]...
  --stdio          serve MCP on stdin/stdout (for an MCP host that starts this command)
  --http           serve MCP over Streamable HTTP at http://127.0.0.1:PORT/mcp (sessions, cancel, tasks)
  --port N         HTTP port (default 8765; 0 picks a free one)
  --host H         interface to bind (default 127.0.0.1)
  --tools M        module exporting \`tools: Tool[]\` (default: $DURABLE_TOOLS_TOOLS_MODULE, else the demo's)
  --no-worker      do not run a worker in this process (workers run elsewhere on the same task queue)
  --allow-host     another accepted Host header (name:port), e.g. behind a proxy
  --allow-origin   another accepted Origin header
Environment: DURABLE_TOOLS_TOOLS_MODULE (tools to serve, default the demo's), DURABLE_TOOLS_MCP_TOKEN (bearer token
required over HTTP), DURABLE_TOOLS_MCP_CONFIG (a {"mcpServers": ...} file whose tools the worker also runs),
TEMPORAL_ADDRESS etc. (default: a local dev server, started if none answers on 127.0.0.1:7233).`;

/**
 * Runs the MCP server command until SIGINT/SIGTERM (stdio: until stdin closes). Exposes the tools of
 * `DURABLE_TOOLS_TOOLS_MODULE` (and of `DURABLE_TOOLS_MCP_CONFIG`'s servers), each call run as a Temporal workflow.
 * Returns the process exit code.
 */
export async function runMcpCommand(argv: readonly string[], options: McpCommandOptions = {}): Promise<number> {
  const parsed = parseMcpArgs(argv);
  if (!parsed) return 2;
  const { values } = parsed;
  if (values.help || values.stdio === values.http) {
    console.error(MCP_COMMAND_USAGE);
    return values.help ? 0 : 2;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`--port must be a port number, not "${values.port}".`);
    return 2;
  }
  // On stdio, stdout belongs to the protocol: every message of ours goes to stderr.
  const say = (line: string) => console.error(line);
  if (values.stdio) console.log = console.error;
  const stopRequested = Promise.race([untilSignal(), ...(options.until ? [options.until.then(() => {})] : [])]);

  const toolsModule =
    values.tools ??
    (process.env.DURABLE_TOOLS_TOOLS_MODULE || join(__dirname, '..', '..', 'examples', 'trip-tools.ts'));
  // A TypeScript module without tsx in the project is reported now, before a server is started.
  enableTypeScriptFor(resolve(toolsModule), process.cwd());
  const settings = connectionSettingsFromEnv();
  const temporal = await ensureLocalTemporal(settings, { log: say });
  const tools = await loadToolsModule(toolsModule);
  const mcpConfigPath = process.env.DURABLE_TOOLS_MCP_CONFIG;
  const host = mcpConfigPath ? new McpHost(loadMcpConfigFile(mcpConfigPath)) : undefined;
  await host?.refresh();
  const registry: ToolRegistry = host ? withMcpTools(createToolRegistry(tools), host) : createToolRegistry(tools);
  const client = await connectClient({ ...settings, address: temporal.address });
  const stopWorker = values['no-worker'] ? async () => {} : await startWorker(registry, host, temporal.address);
  const createServer = () =>
    createDurableMcpServer({ client, taskQueue: settings.taskQueue, catalog: registry.catalog() });
  try {
    if (values.stdio) {
      const server = createServer();
      const closed = new Promise<void>((resolve) => (server.onclose = resolve));
      await server.connect(new StdioServerTransport());
      say(`durable-tools MCP server on stdio: ${registry.list().length} tools, Temporal at ${temporal.address}.`);
      await Promise.race([closed, stopRequested]);
      await server.close();
    } else {
      const token = process.env.DURABLE_TOOLS_MCP_TOKEN || undefined;
      const listener = await startMcpHttpListener({
        port,
        host: values.host,
        createServer,
        ...(token ? { token } : {}),
        ...(values['allow-host'] ? { allowedHosts: values['allow-host'] } : {}),
        ...(values['allow-origin'] ? { allowedOrigins: values['allow-origin'] } : {}),
      });
      say(
        `durable-tools MCP server at ${listener.url}${token ? ' (bearer token required)' : ''}: ${registry.list().length} tools, Temporal at ${temporal.address}. Ctrl-C stops it.`,
      );
      await stopRequested;
      await listener.close();
    }
  } finally {
    await stopWorker();
    await host?.close();
    await client.connection.close();
    await temporal.stop();
  }
  return 0;
}

/** Options of {@link runMcpCommand} besides its arguments. */
export interface McpCommandOptions {
  /** Resolves when the command should stop, besides SIGINT/SIGTERM (the command line's parent watch). */
  until?: Promise<unknown>;
}

/** Parses the arguments strictly; prints the mistake and the usage and returns undefined on a bad one. */
function parseMcpArgs(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        stdio: { type: 'boolean' },
        http: { type: 'boolean' },
        port: { type: 'string', default: '8765' },
        host: { type: 'string', default: '127.0.0.1' },
        'no-worker': { type: 'boolean' },
        'allow-host': { type: 'string', multiple: true },
        'allow-origin': { type: 'string', multiple: true },
        tools: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    });
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${MCP_COMMAND_USAGE}`);
    return undefined;
  }
}

async function startWorker(
  registry: ToolRegistry,
  host: McpHost | undefined,
  address: string,
): Promise<() => Promise<void>> {
  const transcripts = createTranscriptStore();
  const idempotencyStore = createIdempotencyStore();
  const { worker, close } = await createWorker({
    tools: registry,
    idempotencyStore,
    transcripts,
    settings: { address },
  });
  const running = worker.run();
  return async () => {
    worker.shutdown();
    await running;
    await close();
    await idempotencyStore.close();
    await transcripts.close();
  };
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

if (require.main === module) {
  runMcpCommand(process.argv.slice(2))
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    });
}
