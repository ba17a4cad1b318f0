import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { LONG_CALL_DEFAULTS } from '../../tools/long-call';
import { McpConfigError } from './mcp-config-error';
import { hasAuthorizationHeader, mcpOAuthSchema } from './mcp-oauth-config';

/**
 * How far durable-tools believes what an MCP server says about its own tools.
 * - `trusted`: its annotations (`readOnlyHint`, `idempotentHint`, `destructiveHint`) set the effect tier and
 *   retry policy, and its descriptions reach the model as they are.
 * - `untrusted` (the default): only `readOnlyHint: true` is believed (a read can be retried); every other tool is
 *   treated as destructive and not idempotent, and its description is fenced as untrusted text.
 */
export type McpTrust = 'trusted' | 'untrusted';

/**
 * How tools that can run as MCP tasks (MCP 2025-11-25, `execution.taskSupport`) are called.
 * - `use`: `'when-required'` (default) runs only tools that say `required` as tasks (the others are plain calls);
 *   `'when-supported'` also runs tools that say `optional` as tasks, which survive a worker crash without
 *   sending the call again. Either way only when the server declares `tasks.requests.tools.call`.
 * - `deadlineMs`: how long a task may take in all, attempts included (default 1 h).
 * - `heartbeatTimeoutMs`: how soon a worker that died while polling is noticed and another worker resumes
 *   polling the same task (default 30 s).
 */
const tasksSchema = z
  .strictObject({
    use: z.enum(['when-required', 'when-supported']).default('when-required'),
    deadlineMs: z.number().int().positive().optional(),
    heartbeatTimeoutMs: z.number().int().positive().optional(),
  })
  .refine(
    (tasks) =>
      (tasks.heartbeatTimeoutMs ?? LONG_CALL_DEFAULTS.heartbeatTimeoutMs) <
      (tasks.deadlineMs ?? LONG_CALL_DEFAULTS.deadlineMs),
    'tasks.heartbeatTimeoutMs (default 30 s) must be shorter than tasks.deadlineMs (default 1 h)',
  );

/** The `tasks` settings of a server, defaults applied (see the schema's documentation). */
export type McpTaskSettings = z.output<typeof tasksSchema>;

const common = {
  /** See {@link McpTrust}; `untrusted` unless said. */
  trust: z.enum(['trusted', 'untrusted']).default('untrusted'),
  /** Only these tools of the server (by their MCP name); all when absent. */
  tools: z.array(z.string().min(1)).optional(),
  /** Start-to-close timeout of one call, in ms (default 60 s, the MCP SDK's own default). */
  timeoutMs: z.number().int().positive().optional(),
  /** Whether the server is skipped. */
  disabled: z.boolean().optional(),
  /** How tools that can run as MCP tasks are called (see {@link McpTaskSettings}). */
  tasks: tasksSchema.optional(),
  /**
   * The MCP revision to speak (see {@link McpProtocolChoice}): `auto` (default) asks `server/discover` and falls
   * back to `initialize`; `2025-11-25` skips the probe; `2026-07-28` insists on it (no fallback).
   */
  protocol: z.enum(['auto', '2025-11-25', '2026-07-28']).optional(),
};

/**
 * Which MCP revision the worker speaks with a server: `auto` negotiates (a `server/discover` probe, then
 * 2026-07-28 or the 2025-11-25 `initialize` handshake; over stdio the probe costs a second start of the server),
 * `2025-11-25` goes straight to `initialize` (and negotiates the older 2025/2024 revisions as before), `2026-07-28`
 * requires it (a server that does not offer it is an error, never a fallback).
 */
export type McpProtocolChoice = 'auto' | '2025-11-25' | '2026-07-28';

const stdioServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to the minimal environment the MCP SDK gives a child (HOME, PATH, ...). */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  ...common,
});

const httpServerSchema = z
  .strictObject({
    type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).optional(),
    /** OAuth access tokens obtained and renewed by the worker (see `McpOAuthSettings`). */
    oauth: mcpOAuthSchema.optional(),
    ...common,
  })
  .refine(
    (server) => server.oauth === undefined || !hasAuthorizationHeader(server.headers),
    'oauth and an Authorization header are exclusive: the worker sets Authorization from its OAuth tokens',
  );

/** One configured stdio server. */
export type McpStdioServerConfig = z.output<typeof stdioServerSchema>;
/** One configured Streamable HTTP server. */
export type McpHttpServerConfig = z.output<typeof httpServerSchema>;
/** One configured server, stdio or Streamable HTTP. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

const configSchema = z.strictObject({
  mcpServers: z.record(
    z.string().regex(/^[a-zA-Z0-9-]{1,32}$/, 'a server name is 1-32 letters, digits or "-" (no "_")'),
    z.union([stdioServerSchema, httpServerSchema]),
  ),
  /** How long a tool list is believed before it is listed again, in ms (default 5 minutes). */
  listTtlMs: z.number().int().nonnegative().optional(),
});

/** The `{"mcpServers": {...}}` document, validated, with defaults applied. */
export type McpServersConfig = z.output<typeof configSchema>;
/** What a user writes (defaults not yet applied). */
export type McpServersConfigInput = z.input<typeof configSchema>;

/** The list TTL when the configuration gives none. */
export const DEFAULT_MCP_LIST_TTL_MS = 5 * 60_000;
/** Per-call timeout when a server gives none (the MCP SDK's default request timeout). */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;

/**
 * Validates an MCP servers configuration in the shape MCP hosts use:
 * `{"mcpServers": {"name": {"command", "args", "env", "cwd"} | {"url", "headers"}, ...}}`, each with an optional
 * `trust` (`untrusted` by default). Throws a {@link McpConfigError} that names every problem.
 *
 * @example
 * ```ts
 * const config = parseMcpConfig({
 *   mcpServers: {
 *     everything: { command: 'npx', args: ['mcp-server-everything', 'stdio'], trust: 'trusted' },
 *     search: { url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer …' } },
 *   },
 * });
 * ```
 */
export function parseMcpConfig(input: unknown): McpServersConfig {
  const parsed = configSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new McpConfigError(`Invalid MCP servers configuration: ${problems.join('; ')}.`, 'INVALID_CONFIG');
}

/** Reads and validates an MCP servers configuration file (JSON). */
export function loadMcpConfigFile(path: string): McpServersConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new McpConfigError(`Cannot read the MCP configuration ${path}: ${(cause as Error).message}`, 'UNREADABLE', {
      cause,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    // V8's message quotes the text around the error, which may be part of a header token: say only where it is.
    throw new McpConfigError(`${path} is not valid JSON (${jsonErrorPlace(text, cause)}).`, 'INVALID_CONFIG');
  }
  return parseMcpConfig(json);
}

/** Where JSON.parse stopped, as `line L, column C`, without quoting any of the text. */
function jsonErrorPlace(text: string, cause: unknown): string {
  const position = /position (\d+)/.exec(cause instanceof Error ? cause.message : '')?.[1];
  if (position === undefined) return 'an unexpected token or end of text';
  const before = text.slice(0, Number(position));
  const line = before.split('\n').length;
  return `line ${line}, column ${Number(position) - before.lastIndexOf('\n')}`;
}

/** True when the server is reached over stdio. */
export function isStdioServer(server: McpServerConfig): server is McpStdioServerConfig {
  return 'command' in server;
}
