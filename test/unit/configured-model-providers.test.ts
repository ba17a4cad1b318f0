import {
  createConfiguredModelProvider,
  modelProviderConfigFromEnv,
  modelProvidersFromEnv,
} from '../../src/model/configured-model-providers';
import { ModelConfigError } from '../../src/model/model-config-error';

describe('model configuration from the environment', () => {
  test('no DURABLE_TOOLS_MODEL, or scripted, means the offline scripted model only', async () => {
    expect(modelProviderConfigFromEnv({})).toBeUndefined();
    expect(modelProviderConfigFromEnv({ DURABLE_TOOLS_MODEL: 'scripted' })).toBeUndefined();
    expect(await modelProvidersFromEnv({})).toEqual({});
  });

  test('openai reads its usual key and base URL variables', () => {
    expect(
      modelProviderConfigFromEnv({
        DURABLE_TOOLS_MODEL: 'openai:gpt-4.1',
        OPENAI_API_KEY: 'k',
        OPENAI_BASE_URL: 'http://h/v1',
      }),
    ).toEqual({ kind: 'openai', model: 'gpt-4.1', apiKey: 'k', baseURL: 'http://h/v1' });
  });

  test('anthropic reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL', () => {
    expect(
      modelProviderConfigFromEnv({
        DURABLE_TOOLS_MODEL: 'anthropic',
        ANTHROPIC_API_KEY: 'a',
        ANTHROPIC_BASE_URL: 'http://a/v1',
      }),
    ).toEqual({
      kind: 'anthropic',
      apiKey: 'a',
      baseURL: 'http://a/v1',
    });
  });

  test('the DURABLE_TOOLS_MODEL_* overrides win over the provider variables', () => {
    expect(
      modelProviderConfigFromEnv({
        DURABLE_TOOLS_MODEL: 'openai-compatible:llama3.2',
        OPENAI_COMPATIBLE_BASE_URL: 'http://ignored/v1',
        DURABLE_TOOLS_MODEL_BASE_URL: 'http://127.0.0.1:11434/v1',
        DURABLE_TOOLS_MODEL_API_KEY: 'x',
      }),
    ).toEqual({ kind: 'openai-compatible', model: 'llama3.2', baseURL: 'http://127.0.0.1:11434/v1', apiKey: 'x' });
  });

  test('an unknown provider is a clear configuration error', () => {
    expect(() => modelProviderConfigFromEnv({ DURABLE_TOOLS_MODEL: 'gemini' })).toThrow(
      expect.objectContaining({ name: 'ModelConfigError', code: 'UNKNOWN_PROVIDER_KIND' }),
    );
  });
});

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

describe('configured providers', () => {
  test('openai-compatible without a base URL is refused at start-up', async () => {
    await expect(createConfiguredModelProvider({ kind: 'openai-compatible', model: 'm' })).rejects.toMatchObject({
      code: 'MISSING_BASE_URL',
    });
  });

  test('openai-compatible without a model id fails the turn with a clear error', async () => {
    const provider = await createConfiguredModelProvider({
      kind: 'openai-compatible',
      baseURL: 'http://127.0.0.1:1/v1',
    });
    const context = { signal: new AbortController().signal, deadline: Date.now() + 1_000 };
    await expect(
      provider({ goal: 'g', turn: 0, transcript: [], tools: [], settings: { provider: 'openai-compatible' } }, context),
    ).rejects.toMatchObject({ code: 'MISSING_MODEL_ID' });
  });

  test('a provider package that is not installed is named with the command to install it', async () => {
    jest.resetModules();
    jest.doMock('@ai-sdk/anthropic', () => {
      throw Object.assign(new Error("Cannot find module '@ai-sdk/anthropic'"), { code: 'MODULE_NOT_FOUND' });
    });
    const { createConfiguredModelProvider: create } = await import('../../src/model/configured-model-providers');
    const error: unknown = await create({ kind: 'anthropic' }).catch((e: unknown) => e);
    // From Node 22 on the AI SDK 7 line is the one to install; before, only AI SDK 6 runs.
    const line = NODE_MAJOR >= 22 ? '@ai-sdk/anthropic@^4' : '@ai-sdk/anthropic@^3';
    expect(error).toMatchObject({
      code: 'PROVIDER_NOT_INSTALLED',
      message: expect.stringContaining(`npm install ${line}`),
    });
    expect((error as Error).name).toBe('ModelConfigError');
    jest.dontMock('@ai-sdk/anthropic');
  });

  test('a package that is installed but cannot be loaded says so, with its own error', async () => {
    jest.resetModules();
    jest.doMock('@ai-sdk/openai', () => {
      throw new Error('boom inside the package');
    });
    const { createConfiguredModelProvider: create } = await import('../../src/model/configured-model-providers');
    await expect(create({ kind: 'openai' })).rejects.toMatchObject({
      code: 'PROVIDER_LOAD_FAILED',
      message: expect.stringContaining('boom inside the package'),
    });
    jest.dontMock('@ai-sdk/openai');
  });

  (NODE_MAJOR < 22 ? test : test.skip)(
    'on Node 20, an AI SDK 7 package that cannot be required names the Node it needs and the AI SDK 6 line',
    async () => {
      jest.resetModules();
      jest.doMock('@ai-sdk/openai', () => {
        throw Object.assign(new Error('require() of ES Module'), { code: 'ERR_REQUIRE_ESM' });
      });
      const { createConfiguredModelProvider: create } = await import('../../src/model/configured-model-providers');
      await expect(create({ kind: 'openai' })).rejects.toMatchObject({
        code: 'UNSUPPORTED_NODE_VERSION',
        message: expect.stringMatching(/AI SDK 7 line, which needs Node ≥ 22.*npm install @ai-sdk\/openai@\^3/),
      });
      jest.dontMock('@ai-sdk/openai');
    },
  );

  test('ModelConfigError is a local error with a name and a code', () => {
    const error = new ModelConfigError('m', 'MISSING_BASE_URL');
    expect(error).toMatchObject({ name: 'ModelConfigError', code: 'MISSING_BASE_URL' });
  });
});
