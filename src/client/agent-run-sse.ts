import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { StreamStore } from '../stores/streams/stream-store';
import type { AgentRunStreamRun } from './agent-run-stream-readers';
import { streamAgentRun } from './stream-agent-run';

/** Defaults of {@link serveAgentRunStream}. */
export const AGENT_RUN_SSE_DEFAULTS = {
  /** A comment line this often keeps proxies from closing an idle stream (default 15 s). */
  keepAliveMs: 15_000,
  /** The reconnection delay the browser is told (`retry:`), in ms. */
  retryMs: 1_000,
} as const;

/** Options of {@link serveAgentRunStream}. */
export interface ServeAgentRunStreamOptions {
  client: Client;
  /** The stream store the run's workers publish to. */
  store: StreamStore;
  /** The run's workflow id. */
  workflowId: string;
  /** Keep-alive comment interval in ms (default 15 s). */
  keepAliveMs?: number;
  /**
   * Whether the requester may read this run (default: yes). A run it may not read is answered exactly like a run
   * that does not exist (404, the same body), so an id tells a stranger nothing.
   */
  mayRead?: (run: AgentRunStreamRun) => boolean;
}

/**
 * Answers one HTTP request with the live events of a run as server-sent events, for a browser's `EventSource`:
 * each event is `id: <offset>`, `event: <type>`, `data: <the event as JSON>`, and once the run has ended and all
 * its events were sent, an `end` event closes the stream. A reconnecting browser sends `Last-Event-ID` and
 * resumes after that offset (no event twice, none skipped); a first request may say `?from=<offset>`. A run that
 * does not exist, or that `mayRead` refuses, answers the same 404. Mount it in any Node HTTP server or framework (`startAgentRunStreamServer` is a
 * ready one).
 *
 * @example
 * ```ts
 * app.get('/runs/:id/stream', (req, res) => serveAgentRunStream(req, res, { client, store, workflowId: req.params.id }));
 * // in the browser:
 * const source = new EventSource('/runs/trip-42/stream');
 * source.addEventListener('text-delta', (e) => append(JSON.parse(e.data).delta));
 * source.addEventListener('end', () => source.close());
 * ```
 */
export async function serveAgentRunStream(
  request: IncomingMessage,
  response: ServerResponse,
  options: ServeAgentRunStreamOptions,
): Promise<void> {
  const from = resumeOffset(request);
  if (!(await readable(options))) {
    return sendJson(response, 404, { code: 'NOT_FOUND', message: 'No such run to read.' });
  }
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  response.once('close', stop); // the browser went away (or the stream ended)
  const events = streamAgentRun(options.client, options.workflowId, {
    store: options.store,
    from,
    signal: abort.signal,
  });
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  response.write(`retry: ${AGENT_RUN_SSE_DEFAULTS.retryMs}\n\n`);
  const keepAlive = setInterval(
    () => response.write(': keep-alive\n\n'),
    options.keepAliveMs ?? AGENT_RUN_SSE_DEFAULTS.keepAliveMs,
  );
  try {
    for await (const event of events) {
      response.write(`id: ${event.offset}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    if (!abort.signal.aborted) response.write('event: end\ndata: {}\n\n');
  } finally {
    clearInterval(keepAlive);
    await events.return(undefined);
    response.end();
  }
}

/** Whether the run exists and the requester may read it. */
async function readable(options: ServeAgentRunStreamOptions): Promise<boolean> {
  try {
    const description = await options.client.workflow.getHandle(options.workflowId).describe();
    const rootWorkflowId = description.rootExecution?.workflowId ?? description.workflowId;
    return options.mayRead?.({ workflowId: description.workflowId, rootWorkflowId }) ?? true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** `Last-Event-ID` (a reconnecting `EventSource`) plus one, else `?from=`, else 1. */
function resumeOffset(request: IncomingMessage): number {
  const header = request.headers['last-event-id'];
  const last = typeof header === 'string' && /^\d+$/.test(header.trim()) ? Number(header) : undefined;
  if (last !== undefined) return last + 1;
  const from = Number(new URL(request.url ?? '/', 'http://localhost').searchParams.get('from'));
  return Number.isInteger(from) && from >= 1 ? from : 1;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
