import type { Client } from '@temporalio/client';
import { startAgentRun } from '../../src/client/agent-run-client';
import type { AgentRunInput } from '../../src/contract/agent-run-types';

/** A client that fails the test when used: the input is refused before any call to the server. */
const unusedClient = new Proxy({} as Client, {
  get: (_, property) => {
    throw new Error(`the client was used (${String(property)})`);
  },
});

const input: AgentRunInput = { goal: 'Book a trip', model: { provider: 'scripted', script: [] } };

describe('the run input at the client', () => {
  it('refuses a start option put in the input, naming it and where it belongs', async () => {
    const misplaced = { ...input, workflowId: 'trip-1' } as AgentRunInput;
    await expect(startAgentRun(unusedClient, misplaced)).rejects.toMatchObject({
      name: 'AgentRunStartError',
      code: 'UNKNOWN_INPUT_FIELD',
      message: expect.stringMatching(/"workflowId".*start option.*\{ workflowId \}/),
    });
  });

  it('refuses a misspelt field, naming it', async () => {
    const misspelt = { ...input, allowedTool: ['lookup'] } as AgentRunInput;
    await expect(startAgentRun(unusedClient, misspelt)).rejects.toMatchObject({
      code: 'UNKNOWN_INPUT_FIELD',
      message: expect.stringContaining('"allowedTool"'),
    });
  });
});
