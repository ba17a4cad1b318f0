import { createModelActivities, type CallModelInput } from '../../src/activities/model-activities';
import { fromGenerateResult } from '../../src/model/ai-sdk-mapping';
import type { ModelProvider } from '../../src/contract/model-types';
import { createToolRegistry } from '../../src/tools/tool-registry';

/**
 * Step arguments have one shape whatever the provider: an AI SDK provider hands over the model's JSON text, a
 * script an object, and the run records both as the same object. What is not a JSON object stays as sent.
 */

/** A provider the way `aiSdkModelProvider` answers: one generate result, tool-call input as the model's text. */
function aiSdkStyleProvider(input: string): ModelProvider {
  return async () =>
    fromGenerateResult({
      content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'book_hotel', input }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 5, text: 5, reasoning: 0 },
      },
      warnings: [],
    } as unknown as Parameters<typeof fromGenerateResult>[0]);
}

async function recordedArguments(settings: CallModelInput['settings'], providers = {}): Promise<unknown> {
  const activities = createModelActivities({ registry: createToolRegistry([]), providers });
  const turn = await activities.callModel({
    runKey: `shape-${settings.provider}-${Math.random()}`,
    goal: 'Book a hotel',
    settings,
    turn: 0,
    fromIndex: 0,
    messages: [{ role: 'user', content: 'Book a hotel' }],
  });
  return turn.toolCalls[0]?.arguments;
}

describe('recorded tool-call arguments', () => {
  test("a provider's JSON text and a script's object are recorded as the same object", async () => {
    const args = { city: 'Berlin', nights: 3 };
    const fromProvider = await recordedArguments(
      { provider: 'sdk' },
      { sdk: aiSdkStyleProvider(JSON.stringify(args)) },
    );
    const fromScript = await recordedArguments({
      provider: 'scripted',
      script: [{ toolCalls: [{ name: 'book_hotel', arguments: args }] }],
    });
    expect(fromProvider).toEqual(args);
    expect(fromScript).toEqual(args);
  });

  test('a JSON text in a script is recorded as the object it holds', async () => {
    const recorded = await recordedArguments({
      provider: 'scripted',
      script: [{ toolCalls: [{ name: 'book_hotel', arguments: '{"city":"Berlin"}' }] }],
    });
    expect(recorded).toEqual({ city: 'Berlin' });
  });

  test('text that is not JSON stays as the model sent it, for the guard to explain', async () => {
    const broken = '{"city": "Berlin",}';
    expect(await recordedArguments({ provider: 'sdk' }, { sdk: aiSdkStyleProvider(broken) })).toBe(broken);
  });

  test('JSON text that is not an object (an array) stays as sent', async () => {
    expect(await recordedArguments({ provider: 'sdk' }, { sdk: aiSdkStyleProvider('[1,2]') })).toBe('[1,2]');
  });

  test('JSON text with a __proto__ key stays text, so the guard refuses exactly what was sent', async () => {
    const hostile = '{"__proto__":{"admin":true}}';
    expect(await recordedArguments({ provider: 'sdk' }, { sdk: aiSdkStyleProvider(hostile) })).toBe(hostile);
  });

  test('JSON text with a lone surrogate stays text (a payload would silently replace it)', async () => {
    const lone = '{"city":"\\ud800"}';
    expect(await recordedArguments({ provider: 'sdk' }, { sdk: aiSdkStyleProvider(lone) })).toBe(lone);
  });
});
