import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { ToolDefinitionError } from '../../src/contract/tool-definition-error';

const fields = {
  description: 'Reads something.',
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }),
};

function definitionError(define: () => unknown): ToolDefinitionError {
  try {
    define();
  } catch (error) {
    if (error instanceof ToolDefinitionError) return error;
    throw error;
  }
  throw new Error('defineTool accepted the tool');
}

describe('defineTool({ cache })', () => {
  test('a read-only tool may declare a cache: its catalog entry carries the ttl', () => {
    const tool = defineTool({ name: 'read_it', ...fields, effect: 'read-only', cache: { ttl: '5m' } });
    expect(tool.catalogEntry.cache).toEqual({ ttlMs: 300_000 });
  });

  test('a tool with effects declaring a cache is refused at definition, saying why', () => {
    const error = definitionError(() =>
      defineTool({ name: 'pay_it', ...fields, effect: 'irreversible', idempotent: true, cache: { ttl: '5m' } }),
    );
    expect(error.code).toBe('INVALID_CACHE');
    expect(error.message).toBe(
      'Tool "pay_it": declares cache but its effect is "irreversible": only read-only tools may be cached (a cached answer would skip the call\'s effect).',
    );
  });

  test('a compensable tool declaring a cache is refused too', () => {
    const error = definitionError(() =>
      defineTool({
        name: 'book_it',
        ...fields,
        effect: 'compensable',
        idempotent: true,
        undo: 'unbook_it',
        cache: { ttl: 1_000 },
      }),
    );
    expect(error.code).toBe('INVALID_CACHE');
  });

  test('a cache without a positive ttl, with a key that is no function or with unknown options is refused', () => {
    const define = (cache: unknown) => () =>
      defineTool({ name: 'read_it', ...fields, effect: 'read-only', cache: cache as { ttl: number } });
    expect(definitionError(define({})).message).toContain('cache.ttl must be a finite, positive duration');
    expect(definitionError(define({ ttl: 0 })).message).toContain('cache.ttl must be a finite, positive duration');
    expect(definitionError(define({ ttl: '1m', key: 'id' })).message).toContain('cache.key must be a function');
    expect(definitionError(define({ ttl: '1m', scope: 'run' })).message).toContain('unknown option(s) scope');
  });
});
