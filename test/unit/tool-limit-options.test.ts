import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { ToolDefinitionError } from '../../src/contract/tool-definition-error';

const base = {
  name: 'send_email',
  description: 'Sends an email.',
  input: z.object({ accountId: z.string() }),
  output: z.object({ ok: z.boolean() }),
  effect: 'read-only',
} as const;
const byAccount = ({ accountId }: { accountId: string }) => accountId;

function definitionError(declare: () => unknown): ToolDefinitionError {
  try {
    declare();
  } catch (error) {
    if (error instanceof ToolDefinitionError) return error;
    throw error;
  }
  throw new Error('the declaration was accepted');
}

describe('defineTool: per-tool limits', () => {
  test('puts the limits in the catalog entry, keyed, with the breaker on and the default slot wait', () => {
    const tool = defineTool({
      ...base,
      concurrency: { max: 5, key: byAccount },
      rateLimit: { perSecond: 20, key: byAccount },
    });
    expect(tool.catalogEntry.limits).toEqual({
      concurrency: 5,
      rate: { limit: 20, periodMs: 1_000 },
      keyed: true,
      breaker: true,
      slotWaitMs: 60_000,
    });
  });

  test('a tool without limits has none in its catalog entry', () => {
    expect(defineTool(base).catalogEntry.limits).toBeUndefined();
  });

  test('refuses a rate limit with both perSecond and perMinute', () => {
    const error = definitionError(() => defineTool({ ...base, rateLimit: { perSecond: 1, perMinute: 60 } }));
    expect(error).toMatchObject({ code: 'INVALID_LIMITS' });
    expect(error.message).toContain('exactly one of perSecond and perMinute');
  });

  test('refuses a concurrency that is not a positive integer', () => {
    expect(definitionError(() => defineTool({ ...base, concurrency: { max: 0 } }))).toMatchObject({
      code: 'INVALID_LIMITS',
    });
  });

  test('refuses two different key functions', () => {
    const error = definitionError(() =>
      defineTool({
        ...base,
        concurrency: { max: 1, key: byAccount },
        rateLimit: { perMinute: 5, key: (a) => a.accountId },
      }),
    );
    expect(error.message).toContain('the same function');
  });

  test('refuses limits on a local tool, which cannot wait for a slot', () => {
    const error = definitionError(() => defineTool({ ...base, execution: 'local', concurrency: { max: 2 } }));
    expect(error).toMatchObject({ code: 'INVALID_LIMITS' });
  });
});
