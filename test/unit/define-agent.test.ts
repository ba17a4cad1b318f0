import { z } from 'zod';
import { agentRunInputOf, defineAgent } from '../../src/agents/define-agent';
import { agentTool } from '../../src/agents/agent-tool';
import { checkAnswer } from '../../src/guard/check-answer';

const base = { name: 'planner', instructions: 'Plan trips.', model: { provider: 'scripted' }, tools: ['search'] };
const plan = z.object({ city: z.string(), nights: z.number().int() });

describe('defineAgent', () => {
  test("a run input of the agent carries its instructions, tools and its answer's JSON Schema", () => {
    const agent = defineAgent({ ...base, output: plan, maxAnswerAttempts: 2 });
    const input = agentRunInputOf(agent, 'Plan Berlin');
    expect(input).toMatchObject({
      goal: 'Plan Berlin',
      instructions: 'Plan trips.',
      allowedTools: ['search'],
      output: { maxAttempts: 2, schema: { type: 'object', additionalProperties: false, required: ['city', 'nights'] } },
    });
  });

  test('refuses an output schema that is not an object', () => {
    expect(() => defineAgent({ ...base, output: z.string() })).toThrow(/output must be an object schema/);
  });

  test('refuses empty instructions and a name that is not a tool name', () => {
    expect(() => defineAgent({ ...base, instructions: ' ' })).toThrow(/instructions/);
    expect(() => defineAgent({ ...base, name: 'trip planner' })).toThrow(/name/);
  });

  test("as a tool, the agent's settings become the child's spec, its name and description the tool's", async () => {
    const agent = defineAgent({ ...base, description: 'Plans trips.', output: plan, limits: { maxSteps: 3 } });
    const tool = agentTool(agent);
    expect(tool.contract.catalogEntry).toMatchObject({ name: 'planner', description: 'Plans trips.' });
    await expect(tool.execute({ task: 'Plan Berlin' }, undefined as never)).resolves.toMatchObject({
      goal: 'Plan Berlin',
      allowedTools: ['search'],
      instructions: 'Plan trips.',
      limits: { maxSteps: 3 },
      output: { schema: { type: 'object' } },
    });
  });
});

describe('the check of a typed answer', () => {
  const output = defineAgent({ ...base, output: plan }).outputSpec!;

  test('accepts an answer of the right shape, as its parsed value', () => {
    expect(checkAnswer(output, '{"city":"Berlin","nights":2}')).toEqual({
      ok: true,
      value: { city: 'Berlin', nights: 2 },
    });
  });

  test('refuses prose with INVALID_ANSWER, keeping what the model sent', () => {
    const check = checkAnswer(output, 'Berlin, two nights.');
    expect(check).toMatchObject({
      ok: false,
      sent: 'Berlin, two nights.',
      observation: { code: 'INVALID_ANSWER', message: expect.stringContaining('not valid JSON') },
    });
  });

  test('refuses type drift and invented fields like tool arguments, naming each', () => {
    const check = checkAnswer(output, '{"city":"Berlin","nights":"2","hotel":"Adlon"}');
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.observation.hint).toContain('`nights` must be a number');
    expect(check.observation.hint).toContain('`hotel`');
    expect(check.observation.hint).toContain('JSON Schema');
  });
});
