/**
 * A local HTTP server speaking two model wire formats: OpenAI Chat Completions (`POST /v1/chat/completions`)
 * and Anthropic Messages (`POST /v1/messages`). The real AI SDK provider packages talk to it. Each request
 * is answered by the next queued reply, or by the responder (e.g. one that plays a script by turn). It
 * records every request with its arrival time, and whether the client gave up on it (the abort signal). A
 * request with `"stream": true` is answered with the API's real server-sent events (chunk by chunk, flushed).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ScriptedTurn } from '../../src/model/scripted-model';

/** The wire format of a request. */
export type ModelApi = 'openai' | 'anthropic';

/** A tool call the fake model makes; `arguments` is the raw JSON text. */
export interface FakeToolCall {
  name: string;
  arguments: string;
}

/** How the fake model answers one request. */
export type FakeReply =
  | {
      kind: 'turn';
      text?: string;
      toolCalls?: FakeToolCall[];
      /** `refusal`: OpenAI's refusal field / Anthropic's `refusal` stop reason; `length`: cut off. */
      finish?: 'refusal' | 'length';
      usage?: { input: number; output: number };
      /**
       * When the client asked to stream (`"stream": true`): the text is sent in pieces of this many characters
       * (default 4), each its own SSE chunk, and each tool call's arguments in two pieces.
       */
      chunkChars?: number;
      /**
       * When streaming: send only this many text pieces, then stall (never end) until the client gives up: a
       * turn that is mid-stream when its worker dies.
       */
      stallAfterChunks?: number;
      /** When streaming: send this many text pieces, then wait for `resume` before the rest. */
      pauseAfterChunks?: number;
      resume?: Promise<void>;
    }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> }
  /** Never answers; the client must give up (its abort signal closes the connection). */
  | { kind: 'hang' };

/** One request the server received. */
export interface RecordedRequest {
  api: ModelApi;
  /** Epoch milliseconds of arrival. */
  at: number;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  /** True once the client closed the connection before an answer was sent. */
  aborted: boolean;
}

/** A running fake model server. */
export interface FakeModelServer {
  /** Base URL of both APIs, ending in `/v1`. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Streamed replies' SSE chunks sent so far, over all requests (a test waits for a stall with it). */
  readonly streamedChunks: () => number;
  /** Queues replies, answered in order before the responder is asked. */
  enqueue(...replies: FakeReply[]): void;
  /** Answers requests when the queue is empty. */
  respond(responder: (api: ModelApi, body: Record<string, unknown>) => FakeReply): void;
  close(): Promise<void>;
  /** Stops listening, as a provider that went down: connections are refused until {@link restart}. */
  stop(): Promise<void>;
  /** Listens again on the same port, with the same queue, responder and record of requests. */
  restart(): Promise<void>;
}

/** Default token usage reported per turn. */
export const FAKE_USAGE = { input: 120, output: 30 } as const;

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeModelServer(): Promise<FakeModelServer> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let responder: (api: ModelApi, body: Record<string, unknown>) => FakeReply = () => ({
    kind: 'turn',
    text: 'Nothing more to do.',
  });
  let counter = 0;
  let chunksSent = 0;
  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const api: ModelApi | undefined =
      req.url === '/v1/chat/completions' ? 'openai' : req.url === '/v1/messages' ? 'anthropic' : undefined;
    if (req.method !== 'POST' || !api) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    const record: RecordedRequest = { api, at: Date.now(), body, headers: req.headers, aborted: false };
    requests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
    });
    const reply = queue.shift() ?? responder(api, body);
    if (reply.kind === 'hang') return;
    if (reply.kind === 'error') {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body));
      return;
    }
    counter += 1;
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const events = api === 'openai' ? openAiChunks(reply, body, counter) : anthropicEvents(reply, body, counter);
      for (const event of events) {
        if (event === STALL) return; // the connection stays open until the client closes it
        if (event === PAUSE) {
          await reply.resume;
          continue;
        }
        res.write(event);
        chunksSent += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
      return;
    }
    const payload = api === 'openai' ? openAiCompletion(reply, body, counter) : anthropicMessage(reply, body, counter);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    streamedChunks: () => chunksSent,
    enqueue: (...replies) => queue.push(...replies),
    respond: (next) => {
      responder = next;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    restart: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
  };
}

function openAiCompletion(reply: Extract<FakeReply, { kind: 'turn' }>, body: Record<string, unknown>, n: number) {
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
    id: `call_${n}_${index + 1}`,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  const usage = reply.usage ?? FAKE_USAGE;
  const refusal = reply.finish === 'refusal';
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: refusal ? null : (reply.text ?? null),
          ...(refusal ? { refusal: reply.text ?? 'I cannot help with that.' } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: reply.finish === 'length' ? 'length' : toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
  };
}

function anthropicMessage(reply: Extract<FakeReply, { kind: 'turn' }>, body: Record<string, unknown>, n: number) {
  const content: unknown[] = [];
  if (reply.text !== undefined) content.push({ type: 'text', text: reply.text });
  (reply.toolCalls ?? []).forEach((call, index) => {
    content.push({
      type: 'tool_use',
      id: `toolu_${n}_${index + 1}`,
      name: call.name,
      input: JSON.parse(call.arguments),
    });
  });
  const usage = reply.usage ?? FAKE_USAGE;
  const stop =
    reply.finish === 'refusal'
      ? 'refusal'
      : reply.finish === 'length'
        ? 'max_tokens'
        : (reply.toolCalls ?? []).length > 0
          ? 'tool_use'
          : 'end_turn';
  return {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
}

/** Marks where a streamed reply stalls. */
const STALL = Symbol('stall');
/** Marks where a streamed reply waits for its `resume`. */
const PAUSE = Symbol('pause');

/** The text of a reply in pieces, and where it stalls. */
function pieces(reply: Extract<FakeReply, { kind: 'turn' }>): Array<string | typeof STALL | typeof PAUSE> {
  const size = reply.chunkChars ?? 4;
  const text = reply.text ?? '';
  const out: Array<string | typeof STALL | typeof PAUSE> = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  if (reply.stallAfterChunks !== undefined) return [...out.slice(0, reply.stallAfterChunks), STALL];
  if (reply.pauseAfterChunks !== undefined) out.splice(reply.pauseAfterChunks, 0, PAUSE);
  return out;
}

function halves(text: string): [string, string] {
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

const sse = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** An OpenAI Chat Completions stream (`chat.completion.chunk` events, usage last, then `[DONE]`). */
function openAiChunks(
  reply: Extract<FakeReply, { kind: 'turn' }>,
  body: Record<string, unknown>,
  n: number,
): Array<string | typeof STALL | typeof PAUSE> {
  const base = {
    id: `chatcmpl-${n}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out: Array<string | typeof STALL | typeof PAUSE> = [chunk({ role: 'assistant', content: '' })];
  for (const piece of pieces(reply)) out.push(typeof piece === 'symbol' ? piece : chunk({ content: piece }));
  if (out.includes(STALL)) return out.slice(0, out.indexOf(STALL) + 1);
  const calls = reply.toolCalls ?? [];
  calls.forEach((call, index) => {
    const [first, second] = halves(call.arguments);
    out.push(
      chunk({
        tool_calls: [
          { index, id: `call_${n}_${index + 1}`, type: 'function', function: { name: call.name, arguments: first } },
        ],
      }),
      chunk({ tool_calls: [{ index, function: { arguments: second } }] }),
    );
  });
  out.push(chunk({}, reply.finish === 'length' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop'));
  const usage = reply.usage ?? FAKE_USAGE;
  out.push(
    sse({
      ...base,
      choices: [],
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
    }),
    'data: [DONE]\n\n',
  );
  return out;
}

/** An Anthropic Messages stream (`message_start`, content blocks with deltas, `message_delta`, `message_stop`). */
function anthropicEvents(
  reply: Extract<FakeReply, { kind: 'turn' }>,
  body: Record<string, unknown>,
  n: number,
): Array<string | typeof STALL | typeof PAUSE> {
  const usage = reply.usage ?? FAKE_USAGE;
  const out: Array<string | typeof STALL | typeof PAUSE> = [
    sse(
      {
        type: 'message_start',
        message: {
          id: `msg_${n}`,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input, output_tokens: 0 },
        },
      },
      'message_start',
    ),
  ];
  let index = 0;
  if (reply.text !== undefined) {
    out.push(
      sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 'content_block_start'),
    );
    for (const piece of pieces(reply)) {
      out.push(
        typeof piece === 'symbol'
          ? piece
          : sse(
              { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } },
              'content_block_delta',
            ),
      );
    }
    if (out.includes(STALL)) return out.slice(0, out.indexOf(STALL) + 1);
    out.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
    index += 1;
  }
  (reply.toolCalls ?? []).forEach((call, i) => {
    const [first, second] = halves(call.arguments);
    out.push(
      sse(
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: `toolu_${n}_${i + 1}`, name: call.name, input: {} },
        },
        'content_block_start',
      ),
      sse(
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: first } },
        'content_block_delta',
      ),
      sse(
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: second } },
        'content_block_delta',
      ),
      sse({ type: 'content_block_stop', index }, 'content_block_stop'),
    );
    index += 1;
  });
  const stop = reply.finish === 'length' ? 'max_tokens' : (reply.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn';
  out.push(
    sse(
      {
        type: 'message_delta',
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
      'message_delta',
    ),
    sse({ type: 'message_stop' }, 'message_stop'),
  );
  return out;
}

/** Number of assistant messages in a request: the turn the model is asked for, from 0. */
export function assistantTurns(body: Record<string, unknown>): number {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string }>) : [];
  return messages.filter((message) => message.role === 'assistant').length;
}

/**
 * A responder that plays a scripted model's turns over the wire: turn N of the run (counted from the
 * assistant messages the request carries) answers with `script[N]`.
 */
export function scriptResponder(
  script: readonly ScriptedTurn[],
): (api: ModelApi, body: Record<string, unknown>) => FakeReply {
  return (_api, body) => {
    const turn = script[assistantTurns(body)];
    if (!turn) return { kind: 'turn', text: 'The script has no more turns.' };
    if (turn.final) return { kind: 'turn', ...(turn.text !== undefined ? { text: turn.text } : {}) };
    return {
      kind: 'turn',
      ...(turn.text !== undefined ? { text: turn.text } : {}),
      toolCalls: (turn.toolCalls ?? []).map((call) => ({
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      })),
    };
  };
}

/** Tool names a request offered the model. */
export function offeredTools(request: RecordedRequest): string[] {
  const tools = Array.isArray(request.body.tools) ? (request.body.tools as Array<Record<string, unknown>>) : [];
  return tools.map((tool) =>
    request.api === 'openai' ? String((tool.function as { name?: unknown } | undefined)?.name) : String(tool.name),
  );
}
