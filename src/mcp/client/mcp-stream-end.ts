import type { FetchLike } from '@modelcontextprotocol/client';
import { MCP_IDEMPOTENCY_KEY_META } from './mcp-idempotency-meta';

/**
 * Tells the pool when the SSE response stream of a `tools/call` ends, whether with its answer or cut short: the
 * SDK notices a stream that ended without the answer only at the request's timeout (2026-07-28 has no
 * resumability, and it does not hand the transport's stream-end signal to the caller). The stream is recognised by
 * the idempotency key in the request's `_meta`, the one thing a call and its re-issues share.
 */
export class McpStreamEnds {
  readonly #listeners = new Map<string, () => void>();

  /** Calls `onEnd` each time a `tools/call` stream with this key ends, until the returned function is called. */
  watch(idempotencyKey: string, onEnd: () => void): () => void {
    this.#listeners.set(idempotencyKey, onEnd);
    return () => {
      if (this.#listeners.get(idempotencyKey) === onEnd) this.#listeners.delete(idempotencyKey);
    };
  }

  /** A fetch that passes every request to `base` and watches the SSE answers of keyed `tools/call` requests. */
  fetch(base: FetchLike): FetchLike {
    return async (url, init) => {
      const response = await base(url, init);
      const key = this.#listeners.size > 0 ? keyOf(init?.body) : undefined;
      const onEnd = key === undefined ? undefined : this.#listeners.get(key);
      if (!onEnd || !response.body || !response.headers.get('content-type')?.includes('text/event-stream')) {
        return response;
      }
      return new Response(endWatched(response.body, onEnd), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }
}

/** The idempotency key of a JSON-RPC `tools/call` body, if it is one. */
function keyOf(body: unknown): string | undefined {
  if (typeof body !== 'string' || !body.includes('"tools/call"')) return undefined;
  try {
    const message = JSON.parse(body) as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
    const key = message.method === 'tools/call' ? message.params?._meta?.[MCP_IDEMPOTENCY_KEY_META] : undefined;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The same bytes, and `onEnd` once the stream is done or fails. */
function endWatched(body: ReadableStream<Uint8Array>, onEnd: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          onEnd();
        } else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
        onEnd();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
