import type { AgentRunInput } from '../contract/agent-run-types';
import { AgentRunStartError } from './agent-run-start-error';

/** Every field of {@link AgentRunInput}: a field added to the type and not here fails the typecheck. */
const RUN_INPUT_FIELDS: Record<keyof AgentRunInput, true> = {
  goal: true,
  instructions: true,
  model: true,
  agentName: true,
  output: true,
  allowedTools: true,
  limits: true,
  failurePolicy: true,
  parallelToolCalls: true,
  fastPath: true,
  compensation: true,
  backgroundCalls: true,
  costTable: true,
  toolDisclosure: true,
  approval: true,
  continueAsNewAfterSteps: true,
  trackStatusSearchAttribute: true,
  trackApprovalSearchAttribute: true,
  fork: true,
  subAgent: true,
  dryRun: true,
  carriedOver: true,
};

/** Fields people put in the input that belong to the start options. */
const START_OPTION_FIELDS = new Set(['workflowId', 'runId', 'taskQueue', 'workflowIdReusePolicy', 'eagerStart']);

/**
 * Refuses a run input with a field the run does not know (a typo, or a start option put in the input), naming
 * the field: the workflow would ignore it, and the run would start without what the caller meant.
 */
export function assertKnownRunInputFields(input: AgentRunInput): void {
  const unknown = Object.keys(input).filter((field) => !Object.hasOwn(RUN_INPUT_FIELDS, field));
  if (unknown.length === 0) return;
  const misplaced = unknown.filter((field) => START_OPTION_FIELDS.has(field));
  const hint =
    misplaced.length > 0
      ? ` ${misplaced.join(', ')} ${misplaced.length === 1 ? 'is a start option' : 'are start options'}: pass ` +
        `${misplaced.length === 1 ? 'it' : 'them'} in the options (startAgentRun(client, input, { ${misplaced[0]} })).`
      : '';
  throw new AgentRunStartError(
    `The run input has ${unknown.length === 1 ? 'a field' : 'fields'} an agent run does not know: ` +
      `${unknown.map((field) => JSON.stringify(field)).join(', ')}.${hint}`,
    'UNKNOWN_INPUT_FIELD',
  );
}
