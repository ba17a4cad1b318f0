import { z } from 'zod';
import { ToolDefinitionError } from '../../src/contract/tool-definition-error';
import { defineAgentTool, defineHandoff } from '../../src/tools/define-agent-tool';

const researcher = defineAgentTool({
  name: 'research',
  description: 'Hands a research question to the research agent.',
  input: z.object({ question: z.string(), depth: z.number().int().default(2) }),
  goal: ({ question }) => `Answer with sources: ${question}`,
  tools: ({ depth }) => (depth > 2 ? ['web_search', 'read_page'] : ['web_search']),
  model: { provider: 'scripted', script: [] },
  limits: { maxSteps: 10 },
});

describe('defineAgentTool', () => {
  test('its catalog entry marks it an agent tool, read-only, with the schema of what the parent model reads back', () => {
    const entry = researcher.contract.catalogEntry;
    expect(entry).toMatchObject({ name: 'research', effect: 'read-only', approval: 'never', agent: {} });
    expect(entry.outputSchema).toMatchObject({ required: ['answer', 'childWorkflowId', 'steps', 'usage'] });
  });

  test("its activity builds the child's spec from the validated arguments", async () => {
    const spec = await researcher.execute({ question: 'Why?', depth: 3 }, undefined as never);
    expect(spec).toEqual({
      goal: 'Answer with sources: Why?',
      allowedTools: ['web_search', 'read_page'],
      model: { provider: 'scripted', script: [] },
      limits: { maxSteps: 10 },
    });
  });

  test('a handoff is marked in the catalog entry', () => {
    const handoff = defineHandoff({
      name: 'to_billing',
      description: 'Transfers to billing.',
      input: z.object({}),
      goal: () => 'You are billing.',
      tools: [],
    });
    expect(handoff.contract.catalogEntry.agent).toEqual({ handoff: true });
  });

  test('an agent tool that lists itself among its tools is refused at once', () => {
    expect(() =>
      defineAgentTool({ name: 'loop', description: 'Loops.', input: z.object({}), goal: () => 'g', tools: ['loop'] }),
    ).toThrow(ToolDefinitionError);
  });
});
