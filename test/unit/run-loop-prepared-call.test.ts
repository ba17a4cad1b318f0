import { z } from 'zod';
import { REDACTED, redactArguments, sensitiveArguments, sensitiveValues } from '../../src/contract/sensitive-arguments';
import { PAYLOAD_LIMITS } from '../../src/contract/payload-limits';
import { defineTool } from '../../src/tools/define-tool';
import { prepareCall } from '../../src/workflows/prepared-call';

const CARD = '4111111111111111';
const pay = defineTool({
  name: 'pay',
  description: 'Pays.',
  input: z.object({ amount: z.number(), card: z.string().meta({ sensitive: true }), memo: z.string().optional() }),
  output: z.object({ ok: z.boolean() }),
  effect: 'irreversible',
  idempotent: true,
}).catalogEntry;
const search = defineTool({
  name: 'search',
  description: 'Searches.',
  input: z.object({ q: z.string() }),
  output: z.object({ hits: z.number() }),
  effect: 'read-only',
}).catalogEntry;

describe('a prepared call', () => {
  test('arguments sent as JSON text are redacted in the same text form', () => {
    const prepared = prepareCall(JSON.stringify({ amount: 12, card: CARD }), pay);

    expect(JSON.parse(prepared.redacted as string)).toEqual({ amount: 12, card: REDACTED });
    expect(prepared.secrets).toEqual([CARD]);
  });

  test('arguments sent as JSON text are parsed once for the secrets and the redacted form together', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      prepareCall(JSON.stringify({ amount: 12, card: CARD }), pay);

      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  test('the step records the redacted arguments, never the secret', () => {
    expect(prepareCall({ amount: 12, card: CARD }, pay).recorded).toEqual({ amount: 12, card: REDACTED });
  });

  test('arguments of a tool without sensitive fields are passed on as they are', () => {
    const args = { q: 'Zürich' };

    const prepared = prepareCall(args, search);

    expect(prepared).toEqual({
      raw: args,
      bytes: Buffer.byteLength(JSON.stringify(args)),
      secrets: [],
      redacted: args,
      recorded: args,
    });
    expect(prepared.redacted).toBe(args);
  });

  test('a call of a tool the run does not know is recorded as the model sent it', () => {
    const args = { card: CARD };

    expect(prepareCall(args, undefined)).toMatchObject({ secrets: [], redacted: args, recorded: args });
  });

  test('long arguments are recorded shortened, and measured on what the model sent', () => {
    const raw = { amount: 1, card: CARD, memo: 'm'.repeat(PAYLOAD_LIMITS.recordedArgumentChars * 2) };

    const prepared = prepareCall(raw, pay);

    expect(prepared.bytes).toBe(JSON.stringify(raw).length);
    expect(prepared.recorded).toMatchObject({ $durableTools: 'shortened' });
    expect(JSON.stringify(prepared.recorded)).not.toContain(CARD);
  });

  test('the secrets and the redacted form are those of sensitiveValues and redactArguments', () => {
    const text = JSON.stringify({ amount: 12, card: CARD, memo: 'lunch' });

    expect(sensitiveArguments(text, pay.inputSchema)).toEqual({
      secrets: sensitiveValues(text, pay.inputSchema),
      redacted: redactArguments(text, pay.inputSchema),
    });
  });

  test('text that is not JSON has no secrets and is kept as it is', () => {
    expect(sensitiveArguments('{card: 4111', pay.inputSchema)).toEqual({ secrets: [], redacted: '{card: 4111' });
  });
});
