/**
 * MCP's `logging` utility on the durable server: each session's level (`logging/setLevel`) and the
 * `notifications/message` the server sends about a call, on the stream of the request they concern.
 *
 * The SDK's `Server` declares the capability and keeps a level per session, but it answers an invalid level with
 * `-32603` (its schema error) where the specification asks for `-32602`, and its `sendLoggingMessage` sends outside
 * the request (over Streamable HTTP, on the standalone GET stream, which a client may never open), where the
 * specification says a message produced while handling a request SHOULD go on that request's stream. Both the
 * level and the filter are private to the SDK, so this module keeps them, with the SDK's levels and their order
 * (`LoggingLevelSchema`) and the SDK's rule: a session that never set a level gets every message.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  LoggingLevelSchema,
  McpError,
  SetLevelRequestParamsSchema,
  SetLevelRequestSchema,
  type LoggingLevel,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** The `logger` of every message the durable server sends. */
export const MCP_LOGGER = 'durable-tools';

/** The levels, least severe first (the SDK's order, RFC 5424's severities). */
const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** `logging/setLevel` with any `level`, so an invalid one reaches the handler and is refused as InvalidParams. */
const SetAnyLevelSchema = SetLevelRequestSchema.extend({
  params: SetLevelRequestParamsSchema.extend({ level: z.unknown() }),
});

/** What a message about a call says: an event name and facts, never arguments, keys, tokens or outputs. */
export interface McpLogData {
  /** What happened, e.g. `call.started`, `call.retrying`, `call.finished`. */
  event: string;
  /** One sentence for a person. */
  message: string;
  [fact: string]: unknown;
}

/** Sends messages about one request to its client, filtered by the session's level. */
export interface McpRequestLog {
  (level: LoggingLevel, data: McpLogData): void;
  /** Whether the session lets a message of `level` through now (to skip work whose messages nobody wants). */
  passes(level: LoggingLevel): boolean;
}

/**
 * The levels the sessions of one server chose. Over HTTP each session has its own server, and stdio has one
 * session; the levels are keyed by session id all the same, as the SDK's are.
 */
export class McpLogLevels {
  readonly #levels = new Map<string | undefined, LoggingLevel>();

  /** Whether the session with this id lets a message of `level` through (yes, when it never set a level). */
  passes(level: LoggingLevel, sessionId: string | undefined): boolean {
    const chosen = this.#levels.get(sessionId);
    return chosen === undefined || (SEVERITY.get(level) ?? 0) >= (SEVERITY.get(chosen) ?? 0);
  }

  /** Answers `logging/setLevel` on `server` (declared with the `logging` capability), replacing the SDK's handler. */
  install(server: Server): void {
    server.setRequestHandler(SetAnyLevelSchema, (request, extra) => {
      const level = LoggingLevelSchema.safeParse(request.params.level);
      if (!level.success) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Invalid log level ${JSON.stringify(request.params.level) ?? 'undefined'}: one of ${LoggingLevelSchema.options.join(', ')}.`,
        );
      }
      this.#levels.set(extra.sessionId, level.data);
      return {};
    });
  }

  /**
   * The log of one request: each message whose level the session lets through is sent as `notifications/message`
   * on the request's own stream. A message that cannot be sent (the client went away) is dropped: logging never
   * fails a call.
   */
  requestLog(extra: {
    sessionId?: string;
    sendNotification: (notification: ServerNotification) => Promise<void>;
  }): McpRequestLog {
    const passes = (level: LoggingLevel) => this.passes(level, extra.sessionId);
    const log = (level: LoggingLevel, data: McpLogData) => {
      if (!passes(level)) return;
      extra
        .sendNotification({ method: 'notifications/message', params: { level, logger: MCP_LOGGER, data } })
        .catch(() => {});
    };
    return Object.assign(log, { passes });
  }
}
