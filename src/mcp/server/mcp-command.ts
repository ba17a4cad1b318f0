import { join, resolve } from 'node:path';
import { createAuditStore } from '../../stores/audit/create-audit-store';
import type { AuditStore } from '../../stores/audit/audit-store';
import { asRunGrantStore } from '../../stores/audit/run-grant-store';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { connectClient } from '../../client/agent-run-client';
import { connectionSettingsFromEnv } from '../../client/connection-settings';
import { ensureLocalTemporal } from '../../dev-server/local-temporal';
import { createToolRegistry, type ToolRegistry } from '../../tools/tool-registry';
import { createWorker, loadToolsModuleExports } from '../../runtime/create-worker';
import { enableTypeScriptFor } from '../../runtime/typescript-tools-module';
import { loadMcpConfigFile } from '../client/mcp-config';
import { McpHost, withMcpTools } from '../client/mcp-host';
import { isLoopbackHost } from '../../net/http-guard';
import { MCP_TOKEN_ENV, mcpTokensFromEnv } from './mcp-caller-auth';
import {
  MCP_APPROVERS_ENV,
  mcpApproverNamesFromEnv,
  mcpApproversByName,
  mcpApproversByScope,
  type McpApprovalOptions,
} from './mcp-approver-rules';
import { startTelemetryFromEnv } from '../../telemetry/telemetry-from-env';
import { MCP_OAUTH_ARG_OPTIONS, MCP_OAUTH_ENV, MCP_OAUTH_USAGE, mcpOAuthModeOf } from './mcp-oauth-flags';
import { mcpReadOnlyToolNames } from './mcp-oauth-scopes';
import { discoverOAuthJwksUri } from './mcp-oauth-verifier';
import { startMcpHttpListener } from './mcp-http-listener';
import { MCP_HTTP_SESSION_DEFAULTS } from './mcp-http-sessions';
import type { McpCaller } from './mcp-caller';
import { createDurableMcpServer } from './mcp-server';
import { modernMcpServerFactory } from './mcp-modern-server';
import { defaultMcpServerName, defaultMcpTaskQueue, MCP_SERVER_NAME_PATTERN } from './mcp-server-name';

/** Usage of `npm run mcp` / `durable-tools mcp`. */
export const MCP_COMMAND_USAGE = `usage: durable-tools mcp (--stdio | --http [--port N] [--host H]) [options]
  --stdio             serve MCP on stdin/stdout (for an MCP host that starts this command)
  --http              serve MCP over Streamable HTTP at http://127.0.0.1:PORT/mcp (sessions, cancel, tasks)
  --port N            HTTP port (default 8765; 0 picks a free one)
  --host H            interface to bind (default 127.0.0.1); beyond loopback a token is required
  --tools M           module exporting \`tools: Tool[]\` (default: $DURABLE_TOOLS_TOOLS_MODULE, else the demo's); its
                      \`agents\` export (defineAgent agents) is served too, each as a tool called with { task }
  --name N            server name (default: the tools module's name and a digest of its path); part of the task
                      queue and of every caller's scope
  --task-queue Q      task queue of the calls (default: $DURABLE_TOOLS_TASK_QUEUE, else durable-tools-mcp-<name>)
  --no-worker         do not run a worker in this process (workers run elsewhere on the same task queue)
  --allow-host        another accepted Host header (name:port), e.g. behind a proxy
  --allow-origin      another accepted Origin header
  --max-sessions N    live HTTP sessions at most (default ${MCP_HTTP_SESSION_DEFAULTS.maxSessions})
  --max-sessions-per-caller N
                      live HTTP sessions of one authenticated caller at most (default ${MCP_HTTP_SESSION_DEFAULTS.maxSessionsPerCaller})
  --session-idle S    seconds after which an idle HTTP session is closed (default ${MCP_HTTP_SESSION_DEFAULTS.idleTimeoutMs / 1000})
  --insecure-no-auth  serve HTTP beyond loopback without a token (everyone shares one identity; never do this)
  --allow-self-approval  let an approver approve a call it made itself (decide_approval; default: refused)
${MCP_OAUTH_USAGE}
Environment: DURABLE_TOOLS_TOOLS_MODULE (tools to serve, default the demo's), ${MCP_TOKEN_ENV.token} (bearer token
required over HTTP), ${MCP_TOKEN_ENV.tokens} (name:token,... one caller each; calls, tasks and runs are scoped per
caller), ${MCP_APPROVERS_ENV} (name,... the token callers that may decide approvals through MCP), ${MCP_OAUTH_ENV.issuer}, ${MCP_OAUTH_ENV.audience}, ${MCP_OAUTH_ENV.resource} and ${MCP_OAUTH_ENV.tokenType} (as the
--oauth-* flags), DURABLE_TOOLS_MCP_CONFIG (a {"mcpServers": ...} file whose tools the worker also runs),
DURABLE_TOOLS_MCP_STATE_KEY (at least 32 bytes: signs the approval request states of MCP 2026-07-28; give every
server process of one name the same key; default a random key per process), TEMPORAL_ADDRESS etc. (default: a local dev server, started if none answers on 127.0.0.1:7233), OTEL_* (traces: the
server's Temporal client and worker are traced, and a tools/call's _meta.traceparent joins the caller's trace).`;

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
  const http = httpSettingsOf(values);
  if (typeof http === 'string') {
    console.error(http);
    return 2;
  }
  const stateKey = process.env.DURABLE_TOOLS_MCP_STATE_KEY || undefined;
  if (stateKey !== undefined && Buffer.byteLength(stateKey) < 32) {
    console.error('DURABLE_TOOLS_MCP_STATE_KEY must be at least 32 bytes (it signs approval request states).');
    return 2;
  }
  // On stdio, stdout belongs to the protocol: every message of ours goes to stderr.
  const say = (line: string) => console.error(line);
  if (values.stdio) console.log = console.error;
  const stopRequested = Promise.race([untilSignal(), ...(options.until ? [options.until.then(() => {})] : [])]);

  const toolsModule =
    values.tools ??
    (process.env.DURABLE_TOOLS_TOOLS_MODULE || join(__dirname, '..', '..', '..', 'examples', 'trip-tools.ts'));
  const mcpConfigPath = process.env.DURABLE_TOOLS_MCP_CONFIG;
  const name = values.name ?? defaultMcpServerName(toolsModule, mcpConfigPath);
  if (!MCP_SERVER_NAME_PATTERN.test(name)) {
    console.error(`--name takes 1 to 64 letters, digits, ".", "_" or "-", not "${name}".`);
    return 2;
  }
  const tokens = values.http ? mcpTokensFromEnv() : [];
  const oauthBase = mcpOAuthModeOf(values, { stdio: values.stdio === true, staticTokens: tokens.length > 0 });
  if (typeof oauthBase === 'string') {
    console.error(oauthBase);
    return 2;
  }
  const withOAuth = oauthBase !== undefined;
  const approverNames = mcpApproverNamesFromEnv(tokens.map((t) => t.name));
  if (typeof approverNames === 'string') {
    console.error(approverNames);
    return 2;
  }
  const approvals: McpApprovalOptions = {
    approvers: oauthBase ? mcpApproversByScope(oauthBase.scopes?.approvals) : mcpApproversByName(approverNames),
    allowSelfApproval: values['allow-self-approval'] === true,
  };
  if (values.http && tokens.length === 0 && !withOAuth && !isLoopbackHost(values.host) && !values['insecure-no-auth']) {
    console.error(
      `Refusing to serve MCP on ${values.host} without a token: set ${MCP_TOKEN_ENV.token} or ${MCP_TOKEN_ENV.tokens}, bind 127.0.0.1, or pass --insecure-no-auth.`,
    );
    return 2;
  }
  // A TypeScript module without tsx in the project is reported now, before a server is started.
  enableTypeScriptFor(resolve(toolsModule), process.cwd());
  const settings = connectionSettingsFromEnv();
  const taskQueue = values['task-queue'] || process.env.DURABLE_TOOLS_TASK_QUEUE || defaultMcpTaskQueue(name);
  // The issuer's metadata is read now, so a wrong issuer stops the command before anything starts.
  const jwksUri = oauthBase ? await discoverOAuthJwksUri(oauthBase.issuer) : undefined;
  // OpenTelemetry as the OTEL_* variables ask (nothing loaded when they ask for nothing): with traces, the client
  // starts each call inside the caller's `_meta.traceparent` and the worker's spans follow.
  const telemetry = await startTelemetryFromEnv();
  const tracing = telemetry?.traces === true;
  const temporal = await ensureLocalTemporal(settings, { log: say });
  const { tools, agents } = await loadToolsModuleExports(toolsModule);
  const host = mcpConfigPath ? new McpHost(loadMcpConfigFile(mcpConfigPath)) : undefined;
  await host?.refresh();
  const registry: ToolRegistry = host ? withMcpTools(createToolRegistry(tools), host) : createToolRegistry(tools);
  const client = await connectClient({ ...settings, address: temporal.address }, { tracing });
  // The worker's audit store, which keeps the runs' grants too: this server records them, the worker enforces them.
  const auditStore = createAuditStore();
  const readOnlyTools = mcpReadOnlyToolNames(registry.catalog());
  const toolScopes = oauthBase ? { ...oauthBase.scopes, readOnlyTools } : undefined;
  // A tool behind a per-tool scope is restricted: only a run whose grant names it calls it, whatever path.
  const restrictedTools = Object.keys(oauthBase?.scopes?.perTool ?? {});
  const stopWorker = values['no-worker']
    ? async () => {}
    : await startWorker(registry, { address: temporal.address, taskQueue, tracing, auditStore, restrictedTools });
  const served = {
    client,
    taskQueue,
    name,
    catalog: registry.catalog(),
    ...(agents ? { agents } : {}),
    approvals,
    authority: { grants: asRunGrantStore(auditStore)!, ...(toolScopes ? { scopes: toolScopes } : {}) },
  };
  const createServer = (caller?: McpCaller) => createDurableMcpServer({ ...served, ...(caller ? { caller } : {}) });
  // MCP 2026-07-28 on the same endpoint; a shared key lets several server processes verify each other's approvals.
  const createModernServer = modernMcpServerFactory({ ...served, ...(stateKey ? { requestStateKey: stateKey } : {}) });
  const where = `${registry.list().length} tools, server "${name}" on task queue "${taskQueue}", Temporal at ${temporal.address}`;
  try {
    if (values.stdio) {
      const server = createServer();
      const closed = new Promise<void>((resolve) => (server.onclose = resolve));
      await server.connect(new StdioServerTransport());
      say(`durable-tools MCP server on stdio: ${where}.`);
      await Promise.race([closed, stopRequested]);
      await server.close();
    } else {
      const insecure = tokens.length === 0 && !withOAuth && !isLoopbackHost(values.host);
      const oauth = oauthBase && { ...oauthBase, scopes: toolScopes };
      const listener = await startMcpHttpListener({
        port: http.port,
        host: values.host,
        createServer,
        createModernServer,
        maxSessions: http.maxSessions,
        maxSessionsPerCaller: http.maxSessionsPerCaller,
        sessionIdleTimeoutMs: http.idleMs,
        ...(tokens.length > 0 ? { tokens } : {}),
        ...(oauth ? { oauth } : {}),
        ...(insecure ? { insecureNoAuth: true } : {}),
        ...(values['allow-host'] ? { allowedHosts: values['allow-host'] } : {}),
        ...(values['allow-origin'] ? { allowedOrigins: values['allow-origin'] } : {}),
      });
      if (insecure) {
        say(
          `WARNING: --insecure-no-auth: ${listener.url} serves every tool WITHOUT authentication to anyone who can reach ${values.host}; all of them share one identity (each other's calls, tasks and runs).`,
        );
      }
      const auth = oauthBase
        ? `OAuth access tokens of ${oauthBase.issuer} required (keys at ${jwksUri}; metadata at ${listener.resourceMetadataUrl})`
        : tokens.length > 0
          ? `bearer token required (callers ${tokens.map((t) => t.name).join(', ')})`
          : 'no token (one shared identity)';
      say(`durable-tools MCP server at ${listener.url}: ${where}; ${auth}. Ctrl-C stops it.`);
      await stopRequested;
      await listener.close();
    }
  } finally {
    await stopWorker();
    await auditStore.close();
    await host?.close();
    await client.connection.close();
    await temporal.stop();
    await telemetry?.shutdown();
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
        name: { type: 'string' },
        'task-queue': { type: 'string' },
        'max-sessions': { type: 'string', default: String(MCP_HTTP_SESSION_DEFAULTS.maxSessions) },
        'max-sessions-per-caller': {
          type: 'string',
          default: String(MCP_HTTP_SESSION_DEFAULTS.maxSessionsPerCaller),
        },
        'session-idle': { type: 'string', default: String(MCP_HTTP_SESSION_DEFAULTS.idleTimeoutMs / 1000) },
        'insecure-no-auth': { type: 'boolean' },
        'allow-self-approval': { type: 'boolean' },
        'no-worker': { type: 'boolean' },
        'allow-host': { type: 'string', multiple: true },
        'allow-origin': { type: 'string', multiple: true },
        tools: { type: 'string' },
        help: { type: 'boolean' },
        ...MCP_OAUTH_ARG_OPTIONS,
      },
      strict: true,
    });
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${MCP_COMMAND_USAGE}`);
    return undefined;
  }
}

/** The HTTP settings of the arguments, or what is wrong with them. */
function httpSettingsOf(values: {
  port: string;
  'max-sessions': string;
  'max-sessions-per-caller': string;
  'session-idle': string;
}): { port: number; maxSessions: number; maxSessionsPerCaller: number; idleMs: number } | string {
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    return `--port must be a port number, not "${values.port}".`;
  const maxSessions = Number(values['max-sessions']);
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    return `--max-sessions must be a positive integer, not "${values['max-sessions']}".`;
  const maxSessionsPerCaller = Number(values['max-sessions-per-caller']);
  if (!Number.isInteger(maxSessionsPerCaller) || maxSessionsPerCaller < 1)
    return `--max-sessions-per-caller must be a positive integer, not "${values['max-sessions-per-caller']}".`;
  const idleSeconds = Number(values['session-idle']);
  if (!Number.isFinite(idleSeconds) || idleSeconds <= 0)
    return `--session-idle must be a positive number of seconds, not "${values['session-idle']}".`;
  return { port, maxSessions, maxSessionsPerCaller, idleMs: idleSeconds * 1000 };
}

/**
 * The worker of this process, with the same stores as `durable-tools worker` (`createWorker`'s durable defaults:
 * idempotency keys, transcripts and the approval audit trail in the configured stores, SQLite in `.data/` by
 * default; the audit store is the server's, whose grants it enforces), closed when its run ends.
 */
async function startWorker(
  registry: ToolRegistry,
  options: { address: string; taskQueue: string; tracing: boolean; auditStore: AuditStore; restrictedTools: string[] },
): Promise<() => Promise<void>> {
  const { address, taskQueue, tracing, auditStore, restrictedTools } = options;
  const { worker, close } = await createWorker({
    tools: registry,
    settings: { address, taskQueue },
    auditStore,
    authority: { restrictedTools },
    ...(tracing ? { telemetry: { tracing: true } } : {}),
  });
  const running = worker.run();
  return async () => {
    worker.shutdown();
    await running;
    await close();
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
