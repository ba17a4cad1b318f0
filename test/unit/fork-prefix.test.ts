/**
 * The pure parts of a fork (docs/fork.md): the prefix taken from a recorded run (`buildForkPrefix`), the input
 * of the new run (`forkInput`), and what the forked run's workflow makes of the prefix: its step records and
 * its transcript. No server.
 */
import { AgentRunForkError } from '../../src/client/agent-run-fork-error';
import { buildForkPrefix } from '../../src/client/fork-prefix';
import { forkInput } from '../../src/client/fork-agent-run';
import type { AgentRunInput, AgentRunState, StepRecord } from '../../src/contract/agent-run-types';
import { succeededStep } from '../support/step-records';
import type { StoredOutputReference } from '../../src/contract/claim-check-reference';
import { forkedStepRecords, forkedTranscriptMessages } from '../../src/workflows/forked-prefix';
import { initialRunUsage } from '../../src/workflows/run-usage';

/** A succeeded call of `tool` at `stepId`, proposed by model turn `turn`. */
function step(stepId: number, turn: number, tool = 'book_flight', fields: Partial<StepRecord> = {}): StepRecord {
  return succeededStep(stepId, tool, { turn, ...fields });
}

function state(steps: StepRecord[], fields: Partial<AgentRunState> = {}): AgentRunState {
  return {
    workflowId: 'src',
    runId: 'src',
    runKey: 'src/first',
    goal: 'Book a trip',
    status: 'completed',
    turns: 6,
    stepCount: steps.length,
    generation: 0,
    steps,
    policyWarnings: [],
    usage: { ...initialRunUsage(undefined), turns: [] },
    ...fields,
  };
}

const FIVE = [step(1, 1), step(2, 2), step(3, 3), step(4, 3), step(5, 4)];
const source = (steps = FIVE, fields: Partial<AgentRunState> = {}) => ({
  workflowId: 'src',
  state: state(steps, fields),
});

function refusal(run: ReturnType<typeof source>, fromStep: number): AgentRunForkError {
  try {
    buildForkPrefix(run, fromStep);
  } catch (error) {
    if (error instanceof AgentRunForkError) return error;
    throw error;
  }
  throw new Error('the fork was not refused');
}

describe('buildForkPrefix', () => {
  test('takes the steps before the fork step, in order, with the turn of the last one', () => {
    const fork = buildForkPrefix(source([...FIVE].reverse()), 4);
    expect(fork.steps.map((record) => record.stepId)).toEqual([1, 2, 3]);
    expect(fork).toMatchObject({ sourceWorkflowId: 'src', sourceRunKey: 'src/first', fromStep: 4, turns: 3 });
  });

  test('a fork from step 1 takes nothing and starts at turn 0', () => {
    expect(buildForkPrefix(source(), 1)).toMatchObject({ steps: [], turns: 0 });
  });

  test('a fork from one step past the last takes every step', () => {
    expect(buildForkPrefix(source(), 6).steps).toHaveLength(5);
  });

  test('a fork from further than one step past the last is refused as NOT_ENOUGH_STEPS', () => {
    const error = refusal(source(), 7);
    expect(error.code).toBe('NOT_ENOUGH_STEPS');
    expect(error.message).toContain('Run src has 5 steps');
    expect(error.message).toContain('Fork from step 6 at most');
  });

  test('a fork step that is not a whole number of at least 1 is refused as INVALID_FROM_STEP', () => {
    expect(refusal(source(), 0).code).toBe('INVALID_FROM_STEP');
    expect(refusal(source(), 2.5).code).toBe('INVALID_FROM_STEP');
  });

  test('steps of an earlier continue-as-new generation are refused as PREFIX_NOT_RECORDED', () => {
    const laterGeneration = source([step(4, 3), step(5, 4)], { stepCount: 5, generation: 1 });
    expect(refusal(laterGeneration, 3).code).toBe('PREFIX_NOT_RECORDED');
  });

  test('a step of the prefix that never settled is refused as STEP_NOT_SETTLED', () => {
    const running = step(2, 2, 'book_flight', { status: 'running', observation: undefined });
    expect(refusal(source([step(1, 1), running]), 3).code).toBe('STEP_NOT_SETTLED');
  });

  test('a claim-checked output is carried as its preview, saying which run stored it', () => {
    const stored: StoredOutputReference = {
      $durableTools: 'stored-output',
      handle: 'out:src/first/1',
      bytes: 40_000,
      approxTokens: 10_000,
      chars: 40_000,
      preview: '{"card":"[redacted]","statement":"xxxx',
      hint: 'Call read_stored_output.',
    };
    const run = source([step(1, 1, 'show_card', { observation: { status: 'ok', output: stored } })]);
    expect(buildForkPrefix(run, 2).steps[0]!.observation).toEqual({
      status: 'ok',
      output: {
        $durableTools: 'shortened',
        bytes: 40_000,
        preview: stored.preview,
        note: 'The whole output was stored by run src; this forked run sees its preview only.',
      },
    });
  });

  test('the live progress of a record is not carried', () => {
    const withProgress = step(1, 1, 'book_flight', { progress: { message: 'half way', at: 1 } as never });
    expect(buildForkPrefix(source([withProgress]), 2).steps[0]).not.toHaveProperty('progress');
  });
});

describe('forkInput', () => {
  const sourceInput: AgentRunInput = {
    goal: 'Book a trip',
    model: { provider: 'scripted', script: [] },
    limits: { maxSteps: 10 },
    trackStatusSearchAttribute: true,
    carriedOver: { generation: 1 } as never,
  };
  const fork = buildForkPrefix(source(), 3);

  test("keeps the source's input, without what only the source's executions carry", () => {
    const input = forkInput(sourceInput, fork, { fromStep: 3 });
    expect(input).toEqual({ goal: 'Book a trip', model: sourceInput.model, limits: { maxSteps: 10 }, fork });
  });

  test('replaces the model, the goal and input fields with the overrides', () => {
    const input = forkInput(sourceInput, fork, {
      fromStep: 3,
      model: { provider: 'other' },
      goal: 'Book a cheaper trip',
      input: { limits: { maxSteps: 20 } },
    });
    expect(input).toMatchObject({
      goal: 'Book a cheaper trip',
      model: { provider: 'other' },
      limits: { maxSteps: 20 },
    });
  });
});

describe('the forked prefix in the new run', () => {
  const fork = buildForkPrefix(source(), 5);

  test('every forked record is marked with the source run that owns its effects', () => {
    expect(forkedStepRecords(fork).map((record) => record.forked)).toEqual(
      Array(4).fill({ workflowId: 'src', runKey: 'src/first' }),
    );
  });

  test('a record the source itself forked keeps the run it came from', () => {
    const twice = { ...fork, steps: [step(1, 1, 'book_flight', { forked: { workflowId: 'origin' } })] };
    expect(forkedStepRecords(twice)[0]!.forked).toEqual({ workflowId: 'origin' });
  });

  test('the transcript has one assistant message per turn with its calls, each followed by its observations', () => {
    const messages = forkedTranscriptMessages(fork.steps);
    expect(messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'tool',
    ]);
    expect(messages[4]).toEqual({
      role: 'assistant',
      toolCalls: [
        { id: 'call-3', name: 'book_flight', arguments: { n: 3 } },
        { id: 'call-4', name: 'book_flight', arguments: { n: 4 } },
      ],
    });
    expect(messages[6]).toEqual({
      role: 'tool',
      toolCallId: 'call-4',
      name: 'book_flight',
      stepId: 4,
      observation: { status: 'ok', output: { done: 4 } },
    });
  });
});
