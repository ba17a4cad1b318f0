import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { ToolDefinitionError } from '../../src/contract/tool-definition-error';
import { createToolRegistry } from '../../src/tools/tool-registry';

const base = {
  description: 'Does a thing.',
  input: z.object({ n: z.number() }),
  output: z.object({ ok: z.boolean() }),
  effect: 'read-only' as const,
  idempotent: true,
};

function definitionError(fn: () => unknown): ToolDefinitionError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ToolDefinitionError) return error;
    throw error;
  }
  throw new Error('expected a ToolDefinitionError');
}

describe('defineTool', () => {
  test('produces a catalog entry with JSON Schemas and resolved retry defaults', () => {
    const tool = defineTool({ name: 'count', ...base });
    expect(tool.catalogEntry).toMatchObject({
      name: 'count',
      description: 'Does a thing.',
      effect: 'read-only',
      idempotent: true,
      approval: 'never',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      retry: { maximumAttempts: 3, jitter: 'full' },
      timeoutMs: 30_000,
    });
  });

  test('takes retry and timeout overrides as Temporal durations', () => {
    const tool = defineTool({
      name: 'slow',
      ...base,
      retry: { maximumAttempts: 7, initialDelay: '2s' },
      timeout: '1m',
    });
    expect(tool.catalogEntry.retry).toMatchObject({ maximumAttempts: 7, initialDelayMs: 2000 });
    expect(tool.catalogEntry.timeoutMs).toBe(60_000);
  });

  test('refuses a name the model APIs would not accept', () => {
    expect(definitionError(() => defineTool({ name: 'has space', ...base })).code).toBe('INVALID_NAME');
  });

  test('refuses the names of the engine activities', () => {
    expect(definitionError(() => defineTool({ name: 'callModel', ...base })).code).toBe('INVALID_NAME');
  });

  test('refuses a compensable tool without an undo tool', () => {
    expect(definitionError(() => defineTool({ name: 'book', ...base, effect: 'compensable' })).code).toBe(
      'MISSING_UNDO',
    );
  });

  test('refuses an unlimited number of attempts', () => {
    expect(definitionError(() => defineTool({ name: 'x', ...base, retry: { maximumAttempts: 0 } })).code).toBe(
      'INVALID_RETRY',
    );
  });

  test('refuses a schema that JSON Schema cannot express', () => {
    const error = definitionError(() => defineTool({ name: 'x', ...base, input: z.object({ when: z.date() }) }));
    expect(error.code).toBe('INVALID_SCHEMA');
  });

  test('keeps the contract apart from the implementation', () => {
    const contract = defineTool({ name: 'count', ...base });
    const implemented = contract.implement(async () => ({ ok: true }));
    expect(implemented.contract).toBe(contract);
    expect(JSON.parse(JSON.stringify(contract.catalogEntry))).toEqual(contract.catalogEntry);
  });
});

describe('createToolRegistry', () => {
  const undo = defineTool({ name: 'unbook', ...base, effect: 'irreversible' }).implement(async () => ({ ok: true }));
  const book = defineTool({ name: 'book', ...base, effect: 'compensable', undo: 'unbook' }).implement(async () => ({
    ok: true,
  }));

  test('produces the catalog of all tools in registration order', () => {
    expect(
      createToolRegistry([book, undo])
        .catalog()
        .map((e) => e.name),
    ).toEqual(['book', 'unbook']);
  });

  test('produces the catalog of the named tools only, skipping unknown names', () => {
    expect(
      createToolRegistry([book, undo])
        .catalog(['unbook', 'nope'])
        .map((e) => e.name),
    ).toEqual(['unbook']);
  });

  test('refuses two tools with one name', () => {
    expect(definitionError(() => createToolRegistry([undo, undo])).code).toBe('DUPLICATE_TOOL');
  });

  test('refuses an undo tool that is not registered', () => {
    expect(definitionError(() => createToolRegistry([book])).code).toBe('UNKNOWN_UNDO');
  });
});

describe('declarations are checked at once', () => {
  test.each([
    ['maxDelay', { maxDelay: Infinity }],
    ['initialDelay', { initialDelay: Number.NaN }],
    ['totalDeadline', { totalDeadline: -5 }],
    ['initialDelay', { initialDelay: 'soon' }],
    ['maxDelay', { maxDelay: 0 }],
  ])('refuses a non-finite or non-positive retry.%s', (option, retry) => {
    const error = definitionError(() => defineTool({ name: 'count', ...base, retry: retry as never }));
    expect(error.code).toBe('INVALID_RETRY');
    expect(error.message).toContain(`retry.${option} must be a finite, positive duration`);
  });

  test('refuses a non-finite timeout', () => {
    const error = definitionError(() => defineTool({ name: 'count', ...base, timeout: Infinity }));
    expect(error.message).toContain('timeout must be a finite, positive duration');
  });

  test('refuses an unknown jitter strategy', () => {
    const error = definitionError(() => defineTool({ name: 'count', ...base, retry: { jitter: 'equal' as never } }));
    expect(error.code).toBe('INVALID_RETRY');
    expect(error.message).toContain('retry.jitter must be "full" or "decorrelated"');
  });

  test('refuses an unknown retry option, naming the known ones', () => {
    const error = definitionError(() => defineTool({ name: 'count', ...base, retry: { maxAttempts: 5 } as never }));
    expect(error.message).toContain('unknown retry option "maxAttempts"');
  });

  test.each(['sometimes', true, 1])('refuses the approval value %p', (approval) => {
    const error = definitionError(() => defineTool({ name: 'count', ...base, approval: approval as never }));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('approval must be "never", "always" or a function');
  });

  test('accepts "never", "always" and a predicate as approval', () => {
    for (const approval of ['never', 'always', () => true]) {
      expect(() => defineTool({ name: 'count', ...base, approval: approval as never })).not.toThrow();
    }
  });

  test('refuses an unknown effect, saying what it got', () => {
    const error = definitionError(() => defineTool({ name: 'count', ...base, effect: 'writes' as never }));
    expect(error.code).toBe('INVALID_EFFECT');
    expect(error.message).toContain('(got "writes")');
  });

  test('refuses an idempotent flag that is not a boolean', () => {
    const error = definitionError(() => defineTool({ name: 'count', ...base, idempotent: 'yes' as never }));
    expect(error.code).toBe('INVALID_OPTION');
  });

  test('a read-only tool that does not declare idempotent is idempotent', () => {
    const { idempotent: _left, ...readOnly } = base;
    expect(defineTool({ name: 'count', ...readOnly }).catalogEntry.idempotent).toBe(true);
  });

  test('a tool with effects that does not say whether it is idempotent is refused, saying why it must', () => {
    const { idempotent: _left, ...fields } = base;
    const error = definitionError(() =>
      defineTool(
        // @ts-expect-error -- compensable and irreversible tools must declare idempotent (ToolWithEffects)
        { name: 'charge', ...fields, effect: 'irreversible' },
      ),
    );
    expect(error.code).toBe('MISSING_IDEMPOTENT');
    expect(error.message).toMatch(/must say whether it is idempotent: true when its downstream deduplicates/);
  });

  test.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'describeTools', 'callModel'])(
    'refuses the reserved name %s',
    (name) => {
      const error = definitionError(() => defineTool({ name, ...base }));
      expect(error.code).toBe('INVALID_NAME');
      expect(error.message).toMatch(/reserved .*rename the tool/);
    },
  );

  test('refuses a tool that is its own undo tool', () => {
    const error = definitionError(() =>
      defineTool({ name: 'book', ...base, effect: 'compensable', idempotent: false, undo: 'book' }),
    );
    expect(error.code).toBe('INVALID_UNDO');
    expect(error.message).toContain('separate tool that reverses its effect');
  });

  test('refuses a read-only undo tool when the registry is built', () => {
    const book = defineTool({ name: 'book', ...base, effect: 'compensable', idempotent: false, undo: 'lookup' });
    const lookup = defineTool({ name: 'lookup', ...base });
    const error = definitionError(() =>
      createToolRegistry([book.implement(async () => ({ ok: true })), lookup.implement(async () => ({ ok: true }))]),
    );
    expect(error.code).toBe('INVALID_UNDO');
    expect(error.message).toContain('"lookup" is read-only');
  });
});

describe('local execution', () => {
  test('a read-only tool may declare local execution, and its catalog entry says so', () => {
    const tool = defineTool({ name: 'look_up', ...base, execution: 'local' });
    expect(tool.catalogEntry.execution).toBe('local');
  });

  test('a tool that runs as a regular activity has no execution field in its catalog entry', () => {
    expect(defineTool({ name: 'look_up', ...base }).catalogEntry).not.toHaveProperty('execution');
  });

  test("a tool that declares execution 'activity' keeps it in its catalog entry (it stays regular on the fast path)", () => {
    expect(defineTool({ name: 'look_up', ...base, execution: 'activity' }).catalogEntry.execution).toBe('activity');
  });

  test.each(['compensable', 'irreversible'] as const)('refuses local execution for a %s tool', (effect) => {
    const error = definitionError(() =>
      defineTool({
        name: 'write',
        ...base,
        effect,
        execution: 'local',
        ...(effect === 'compensable' ? { undo: 'unwrite' } : {}),
      }),
    );
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('only read-only tools may run as local activities');
  });

  test('refuses an unknown execution mode', () => {
    const error = definitionError(() => defineTool({ name: 'look_up', ...base, execution: 'inline' as never }));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('execution must be "activity" or "local"');
  });
});
