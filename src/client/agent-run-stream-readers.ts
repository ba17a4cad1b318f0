import type { IncomingMessage } from 'node:http';
import { bearerTokenOf, sameSecret } from '../net/http-guard';

/** A run as far as reading its stream goes: its id and the id of the run at the top of its tree. */
export interface AgentRunStreamRun {
  workflowId: string;
  /** The run itself, or for a sub-agent the top run that started its tree. */
  rootWorkflowId: string;
}

/** Who reads a stream, as its bearer token established it. */
export interface AgentRunStreamReader {
  /** Names the reader for its share of the open streams (readers with the same id share it). */
  id: string;
  /** Whether this reader may read `run`'s stream; a run it may not read is answered as one that does not exist. */
  mayRead(run: AgentRunStreamRun): boolean;
}

/**
 * Tells who holds a bearer token (the token of `Authorization: Bearer <token>`, never one from the URL): a reader, or
 * undefined for a token it does not know. `mcpStreamReaders` gives the callers of the MCP server, each reading the
 * runs it started through it.
 */
export type AgentRunStreamReaders = (
  token: string,
) => AgentRunStreamReader | undefined | Promise<AgentRunStreamReader | undefined>;

/** The reader of the stream token: every run (the backend of an app, which started the runs itself). */
const EVERY_RUN: AgentRunStreamReader = Object.freeze({ id: 'stream-token', mayRead: () => true });

/** The reader when the server has no authentication (loopback only): everyone who reaches it reads every run. */
const ANYONE: AgentRunStreamReader = Object.freeze({ id: 'anyone', mayRead: () => true });

/** Why a request gets no reader: the status and body to answer. */
export interface AgentRunStreamRefusal {
  status: 401;
  body: { code: 'UNAUTHORIZED'; message: string };
}

/**
 * The reader of a request, or the 401 to answer: a token in the query string (`access_token`) is refused whatever
 * else the request carries (URLs end up in logs, histories and `Referer` headers); the bearer token of the
 * `Authorization` header is the stream token (`token`: every run) or one `readers` knows. Without `token` and
 * `readers` every request is the one reader of every run.
 */
export async function streamReaderOf(
  request: IncomingMessage,
  url: URL,
  auth: { token?: string | undefined; readers?: AgentRunStreamReaders | undefined },
): Promise<AgentRunStreamReader | AgentRunStreamRefusal> {
  if (url.searchParams.has('access_token')) {
    return refusal('A token is accepted only in the Authorization header (Bearer), never in the URL.');
  }
  if (auth.token === undefined && auth.readers === undefined) return ANYONE;
  const given = bearerTokenOf(request.headers.authorization);
  if (given !== undefined && auth.token !== undefined && sameSecret(given, auth.token)) return EVERY_RUN;
  const reader = given !== undefined && auth.readers ? await auth.readers(given) : undefined;
  return reader ?? refusal('Send Authorization: Bearer <token>.');
}

function refusal(message: string): AgentRunStreamRefusal {
  return { status: 401, body: { code: 'UNAUTHORIZED', message } };
}
