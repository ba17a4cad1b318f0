import { z } from 'zod';
import { redactFailure, redactingLogger } from '../../src/activities/redact-sensitive';
import { ApplicationFailure } from '@temporalio/common';
import { defineTool } from '../../src/tools/define-tool';
import { REDACTED, redactArguments, redactDeep, sensitiveValues } from '../../src/contract/sensitive-arguments';

const CARD = '4111111111111111';
const pay = defineTool({
  name: 'pay',
  description: 'Pays.',
  input: z.object({
    amount: z.number(),
    card: z.string().meta({ sensitive: true }),
    holder: z.object({ name: z.string(), address: z.string().meta({ sensitive: true }) }),
    notes: z.array(z.string().meta({ sensitive: true })).optional(),
  }),
  output: z.object({ ok: z.boolean() }),
  effect: 'irreversible',
  idempotent: true,
});
const schema = pay.catalogEntry.inputSchema;
const args = { amount: 12, card: CARD, holder: { name: 'Ada', address: '12 Baker Street' }, notes: ['gate code 4471'] };

describe('sensitive arguments', () => {
  test('fields marked .meta({ sensitive: true }) are replaced in the arguments, others kept', () => {
    expect(redactArguments(args, schema)).toEqual({
      amount: 12,
      card: REDACTED,
      holder: { name: 'Ada', address: REDACTED },
      notes: [REDACTED],
    });
  });

  test('arguments sent as a JSON string are redacted and written back as JSON', () => {
    expect(JSON.parse(redactArguments(JSON.stringify(args), schema) as string)).toMatchObject({ card: REDACTED });
  });

  test('a schema without sensitive fields leaves the arguments untouched', () => {
    const plain = { a: 1 };
    expect(redactArguments(plain, { type: 'object', properties: { a: { type: 'number' } } })).toBe(plain);
    expect(sensitiveValues(plain, { type: 'object', properties: { a: { type: 'number' } } })).toEqual([]);
  });

  test('the sensitive values are found for searching free text, longest first', () => {
    expect(sensitiveValues(args, schema)).toEqual([CARD, '12 Baker Street', 'gate code 4471']);
  });

  test('observations and details lose every occurrence of a sensitive value inside their strings', () => {
    const observation = { status: 'error', message: `Card ${CARD} declined`, details: { echo: [`for ${CARD}`] } };
    expect(JSON.stringify(redactDeep(observation, sensitiveValues(args, schema)))).not.toContain(CARD);
  });

  test('a failure leaving an activity keeps its type and retry settings but not the value', () => {
    const failure = ApplicationFailure.create({
      message: `Card ${CARD} declined`,
      type: 'PERMISSION_DENIED',
      nonRetryable: true,
      details: [{ message: `Card ${CARD} declined` }],
    });
    const redacted = redactFailure(failure, [CARD]) as ApplicationFailure;
    expect(redacted).toBeInstanceOf(ApplicationFailure);
    expect(redacted.message).toBe(`Card ${REDACTED} declined`);
    expect(redacted.type).toBe('PERMISSION_DENIED');
    expect(redacted.nonRetryable).toBe(true);
    expect(JSON.stringify(redacted.details)).not.toContain(CARD);
  });

  test('a tool’s log lines lose the values in their message and attributes', () => {
    const lines: string[] = [];
    const sink = (message: string, attributes?: Record<string, unknown>) =>
      lines.push(`${message} ${JSON.stringify(attributes)}`);
    const log = redactingLogger({ debug: sink, info: sink, warn: sink, error: sink }, [CARD]);
    log.info(`charging ${CARD}`, { card: CARD });
    expect(lines).toEqual([`charging ${REDACTED} {"card":"${REDACTED}"}`]);
  });
});
