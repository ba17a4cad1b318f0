import { genAiProviderName } from '../../src/contract/gen-ai-conventions';

test.each([
  ['openai', 'openai'],
  ['anthropic', 'anthropic'],
  ['aws.bedrock', 'aws.bedrock'],
])("a provider registered under the convention's name %s keeps it", (provider, name) => {
  expect(genAiProviderName(provider)).toBe(name);
});

test.each([
  ['google', 'gcp.gen_ai'],
  ['mistral', 'mistral_ai'],
  ['xai', 'x_ai'],
  ['amazon-bedrock', 'aws.bedrock'],
  ['OpenAI', 'openai'],
])("a usual spelling of a well-known provider (%s) becomes the convention's value", (provider, name) => {
  expect(genAiProviderName(provider)).toBe(name);
});

test.each(['scripted', 'openai-compatible', 'acme-llm'])(
  'any other provider name (%s) is reported as it is',
  (name) => {
    expect(genAiProviderName(name)).toBe(name);
  },
);
