/**
 * Streaming through the real AI SDK provider packages against the fake provider server's real SSE chunks:
 * the sink sees the text and the tool-call starts as they arrive, and the turn a streamed call returns is the
 * very turn (same JSON, byte for byte) the non-streaming call returns for the same answer.
 */
import { createConfiguredModelProvider, type ModelProviderKind } from '../../src/model/configured-model-providers';
import type { ModelRequest, ModelStreamSink } from '../../src/contract/model-types';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { startFakeModelServer, type FakeModelServer, type FakeReply } from '../support/fake-model-server';

let server: FakeModelServer;
beforeEach(async () => {
  server = await startFakeModelServer();
});
afterEach(async () => {
  await server.close();
});

const SEARCH = {
  name: 'search_flights',
  description: 'Finds flights.',
  inputSchema: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } } },
} as unknown as ToolCatalogEntry;

const request: ModelRequest = {
  goal: 'Fly me to Berlin.',
  turn: 0,
  transcript: [{ role: 'user', content: 'Fly me to Berlin.' }],
  tools: [SEARCH],
  settings: { provider: 'x' },
};

function recordingSink(): ModelStreamSink & { texts: string[]; starts: string[] } {
  const texts: string[] = [];
  const starts: string[] = [];
  return { texts, starts, text: (delta) => texts.push(delta), toolCallStart: (call) => starts.push(call.name) };
}

const context = () => ({ signal: new AbortController().signal, deadline: Date.now() + 60_000 });

const KINDS: ModelProviderKind[] = ['openai', 'anthropic', 'openai-compatible'];

const REPLIES: Record<string, FakeReply> = {
  'text and a tool call': {
    kind: 'turn',
    text: 'Let me look for flights from Lisbon.',
    toolCalls: [{ name: 'search_flights', arguments: '{"from":"LIS","to":"BER"}' }],
  },
  'a final answer': { kind: 'turn', text: 'FR2381 leaves Lisbon at 06:10 and lands in Berlin at 10:45.' },
  'an answer cut off at the token limit': { kind: 'turn', text: 'The flights are', finish: 'length' },
};

describe.each(KINDS)('the %s provider streaming', (kind) => {
  test.each(Object.keys(REPLIES))('returns the same turn for %s as without streaming', async (name) => {
    // Two servers, so both answers carry the same call ids (each server numbers its own replies).
    const second = await startFakeModelServer();
    try {
      const plain = await createConfiguredModelProvider({ kind, baseURL: server.baseURL, apiKey: 'k', model: 'm' });
      const streaming = await createConfiguredModelProvider({ kind, baseURL: second.baseURL, apiKey: 'k', model: 'm' });
      server.enqueue(REPLIES[name]!);
      second.enqueue(REPLIES[name]!);
      const whole = await plain(request, context());
      const streamed = await streaming(request, { ...context(), stream: recordingSink() });
      expect([server.requests[0]?.body.stream, second.requests[0]?.body.stream]).toEqual([undefined, true]);
      expect(JSON.stringify(streamed)).toBe(JSON.stringify(whole));
    } finally {
      await second.close();
    }
  });

  test('reports the text piece by piece and the tool call when it starts', async () => {
    const provider = await createConfiguredModelProvider({ kind, baseURL: server.baseURL, apiKey: 'k', model: 'm' });
    server.enqueue({ ...REPLIES['text and a tool call']!, chunkChars: 5 } as FakeReply);
    const sink = recordingSink();
    const turn = await provider(request, { ...context(), stream: sink });
    expect(sink.texts.length).toBeGreaterThan(1);
    expect(sink.texts.join('')).toBe(turn.text);
    expect(sink.starts).toEqual(['search_flights']);
  });
});
