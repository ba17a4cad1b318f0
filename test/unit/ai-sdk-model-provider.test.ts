import { aiSdkModelProvider } from '../../src/model/ai-sdk-model-provider';
import type { AiSdkCallOptions, AiSdkGenerateResult, AiSdkLanguageModel } from '../../src/model/ai-sdk-spec';
import type { ModelRequest } from '../../src/contract/model-types';

const REQUEST: ModelRequest = {
  goal: 'g',
  turn: 0,
  transcript: [{ role: 'user', content: 'g' }],
  tools: [],
  settings: { provider: 'p' },
};
const CONTEXT = { signal: new AbortController().signal, deadline: Date.now() + 60_000 };

/** A model of the given spec that answers `Hello.` and records its calls. */
function model(specificationVersion: string): AiSdkLanguageModel & { calls: AiSdkCallOptions[] } {
  const calls: AiSdkCallOptions[] = [];
  const answer: AiSdkGenerateResult = {
    content: [{ type: 'text', text: 'Hello.' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 3, cacheRead: undefined },
      outputTokens: { total: 1, reasoning: undefined },
    },
  };
  return {
    specificationVersion: specificationVersion as AiSdkLanguageModel['specificationVersion'],
    provider: 'fake',
    modelId: `fake-${specificationVersion}`,
    calls,
    doGenerate: async (options) => {
      calls.push(options);
      return answer;
    },
    doStream: async () => {
      throw new Error('this fake model does not stream');
    },
  };
}

describe('the AI SDK adapter and the spec a model implements', () => {
  test.each([
    ['v3', 'AI SDK 6'],
    ['v4', 'AI SDK 7'],
  ])('drives a %s model (%s) with the same call', async (version) => {
    const fake = model(version);
    const turn = await aiSdkModelProvider(fake)(REQUEST, CONTEXT);
    expect(turn).toMatchObject({ text: 'Hello.', done: true, modelId: `fake-${version}` });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]).toMatchObject({ abortSignal: CONTEXT.signal, prompt: expect.any(Array) });
  });

  test('refuses a model of an older spec (AI SDK 5: v2) with what it drives, before calling it', async () => {
    const fake = model('v2');
    await expect(aiSdkModelProvider(fake)(REQUEST, CONTEXT)).rejects.toMatchObject({
      name: 'ModelConfigError',
      code: 'UNSUPPORTED_SPECIFICATION',
      message: expect.stringMatching(/spec v2.*v3 \(AI SDK 6\) or v4 \(AI SDK 7\)/),
    });
    expect(fake.calls).toEqual([]);
  });
});

describe("the AI SDK adapter and a run's settings", () => {
  test("gives the agent's instructions after the engine's system prompt, and the typed answer's schema", async () => {
    const fake = model('v3');
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    await aiSdkModelProvider(fake)({ ...REQUEST, instructions: 'You plan trips.', output: { schema } }, CONTEXT);
    const [system] = fake.calls[0]!.prompt;
    expect(system).toMatchObject({ role: 'system', content: expect.stringContaining('You plan trips.') });
    expect((system as { content: string }).content).toContain(JSON.stringify(schema));
    expect((system as { content: string }).content).toMatch(/^You are an agent/);
  });

  test('passes every AI SDK call setting of the run through as given', async () => {
    const fake = model('v4');
    const settings = {
      provider: 'p',
      temperature: 0.2,
      maxOutputTokens: 300,
      topP: 0.9,
      topK: 40,
      presencePenalty: 0.1,
      frequencyPenalty: 0.3,
      seed: 7,
      stopSequences: ['END'],
      providerOptions: { openai: { reasoningEffort: 'low' } },
      headers: { 'x-team': 'travel' },
    };
    await aiSdkModelProvider(fake)({ ...REQUEST, settings }, CONTEXT);
    const { provider: _provider, ...passed } = settings;
    expect(fake.calls[0]).toMatchObject(passed);
  });
});
