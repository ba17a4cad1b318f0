import type { AgentRunInput, AgentRunResult, RunStatus } from '../../src/contract/agent-run-types';
import type { HostileTurn } from './hostile-model';
import type { EffectLedger } from './payload-tools';

const KB = 1024;
const MB = 1024 * 1024;

/** One hostile run of `npm run stress:payloads`: what the model does, and how the run must end. */
export interface PayloadScenario {
  name: string;
  input: AgentRunInput;
  /** The status the run must end with. */
  expected: RunStatus;
  /** `none`: no tool with effects may run at all (the input was invalid); `once`: at most one effect per key. */
  effects: 'none' | 'once';
  /** Further checks; returns a problem or undefined. */
  check?: (result: AgentRunResult, ledger: EffectLedger, workflowId: string) => string | undefined;
}

function run(goal: string, turns: HostileTurn[], extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return { goal, model: { provider: 'hostile', turns }, limits: { maxSteps: 100, maxTurns: 10 }, ...extra };
}

const critical = { failurePolicy: { criticalTools: ['reject_payment'] } } as const;
const thenReject: HostileTurn = { calls: [{ name: 'reject_payment', args: { json: {} } }] };

/** The hostile scenarios of issue 9: big outputs, big arguments, deep nesting, lone surrogates, bad turns. */
export function payloadScenarios(): PayloadScenario[] {
  return [
    {
      name: '20 outputs of 150 KB in one turn, then a page read',
      input: run(
        'outputs',
        [
          { calls: [{ name: 'big_output', args: { json: { kb: 150 } }, repeat: 20 }] },
          { calls: [{ name: 'read_stored_output', args: { firstStoredOutput: { offset: 0 } } }] },
          { final: 'ok' },
        ],
        { parallelToolCalls: true },
      ),
      expected: 'completed',
      effects: 'none',
      check: (result) =>
        (result.steps.at(-1)?.observation as { output?: { text?: string } })?.output?.text?.length === 6_000
          ? undefined
          : 'read_stored_output did not return a page of 6,000 characters',
    },
    {
      name: '20 outputs of 150 KB one after another',
      input: run('outputs', [{ calls: [{ name: 'big_output', args: { json: { kb: 150 } }, repeat: 20 }] }]),
      expected: 'completed',
      effects: 'none',
    },
    {
      name: '1.5 MB argument echoed across continue-as-new, then compensated',
      input: run(
        'argument',
        [
          { calls: [{ name: 'echo', args: { bigString: { field: 'text', bytes: 1_500_000 } } }] },
          { calls: [{ name: 'echo', args: { json: { text: 'small' } } }] },
          thenReject,
        ],
        { continueAsNewAfterSteps: 1, ...critical },
      ),
      expected: 'compensated',
      effects: 'once',
      check: (result, ledger) =>
        ledger.undone.get(`${result.runKey}/1`) === 1_500_000
          ? undefined
          : `the undo of step 1 received ${ledger.undone.get(`${result.runKey}/1`)} characters, not 1,500,000`,
    },
    {
      name: 'a tool with effects returning 5 MB',
      input: run('five megabytes', [{ calls: [{ name: 'big_effect', args: { json: { mb: 5 } } }] }, { final: 'ok' }]),
      expected: 'completed',
      effects: 'once',
      check: (result, ledger) =>
        ledger.effects.get(`${result.runKey}/1`) === 1 ? undefined : 'big_effect did not run exactly once',
    },
    {
      name: 'a tool failing with a 5 MB error message',
      input: run('explode', [{ calls: [{ name: 'explode', args: { json: { mb: 5 } } }] }, { final: 'ok' }]),
      expected: 'completed',
      effects: 'none',
    },
    {
      name: 'big arguments: 300 KB, 1.9 MB and 3 MB',
      input: run('big arguments', [
        {
          calls: [
            { name: 'save_note', args: { bigString: { field: 'note', bytes: 300 * KB } } },
            { name: 'echo', args: { bigString: { field: 'text', bytes: 1_900 * KB } } },
            { name: 'echo', args: { bigString: { field: 'text', bytes: 3 * MB } } },
          ],
        },
        { final: 'ok' },
      ]),
      expected: 'completed',
      effects: 'none',
    },
    {
      name: 'four arguments of 1 MB in one turn',
      input: run('turn of big arguments', [
        { calls: [{ name: 'echo', args: { bigString: { field: 'text', bytes: MB } }, repeat: 4 }] },
        { final: 'ok' },
      ]),
      expected: 'completed',
      effects: 'once',
    },
    {
      name: '1,000 tool calls in one turn',
      input: run('many calls', [{ calls: [{ name: 'echo', args: { json: { text: 'x' } }, repeat: 1_000 }] }], {
        limits: { maxSteps: 2_000, maxTurns: 5 },
        parallelToolCalls: true,
      }),
      expected: 'completed',
      effects: 'once',
    },
    {
      name: 'a final answer of 5 MB',
      input: run('long answer', [{ finalOfBytes: 5 * MB }]),
      expected: 'completed',
      effects: 'none',
    },
    {
      name: 'arguments nested 10,000 levels deep on a compensable tool, then a critical failure',
      input: run(
        'deep nesting',
        [
          {
            calls: [
              { name: 'save_note', args: { deepNesting: { field: 'meta', levels: 10_000, rest: { note: 'n' } } } },
            ],
          },
          thenReject,
        ],
        critical,
      ),
      expected: 'failed',
      effects: 'none',
    },
    {
      name: 'a lone surrogate in the arguments of a compensable tool, then a critical failure',
      input: run(
        'lone surrogate',
        [{ calls: [{ name: 'save_note', args: { text: '{"note":"\\ud800"}' } }] }, thenReject],
        critical,
      ),
      expected: 'failed',
      effects: 'none',
    },
    {
      name: 'an invented field inside a discriminated union member',
      input: run('invented field', [
        {
          calls: [{ name: 'ship', args: { json: { method: { kind: 'post', address: 'Main St 1', coupon: 'FREE' } } } }],
        },
        { final: 'ok' },
      ]),
      expected: 'completed',
      effects: 'none',
    },
    {
      name: 'an invented field inside a union member',
      input: run('invented field', [
        {
          calls: [
            {
              name: 'ship',
              args: { json: { method: { kind: 'pickup', store: 'S1' }, gift: { wrap: true, ribbon: 'red' } } },
            },
          ],
        },
        { final: 'ok' },
      ]),
      expected: 'completed',
      effects: 'none',
    },
    {
      name: 'keys that exist on Object.prototype',
      input: run('prototype keys', [
        {
          calls: [
            { name: 'ship', args: { text: '{"method":{"kind":"post","address":"x","constructor":1},"toString":"x"}' } },
          ],
        },
        { final: 'ok' },
      ]),
      expected: 'completed',
      effects: 'none',
    },
    {
      name: 'a malformed model turn (toolCalls is a string)',
      input: run('malformed', [{ raw: { toolCalls: 'nope' } }]),
      expected: 'failed',
      effects: 'none',
    },
    {
      name: 'a malformed model turn (text is a number)',
      input: run('malformed', [{ raw: { text: 42, toolCalls: [] } }]),
      expected: 'failed',
      effects: 'none',
    },
    {
      name: 'empty model turns {} in a row',
      input: run('empty turns', [{ raw: {} }, { raw: {} }]),
      expected: 'failed',
      effects: 'none',
      check: (result) =>
        result.reason?.includes('MODEL_EMPTY_RESPONSE')
          ? undefined
          : `the reason does not say MODEL_EMPTY_RESPONSE: ${result.reason}`,
    },
    {
      name: 'one empty model turn {}, then an answer',
      input: run('empty turn then answer', [{ raw: {} }, { final: 'answered after the observation' }]),
      expected: 'completed',
      effects: 'none',
      check: (result) =>
        result.answer === 'answered after the observation'
          ? undefined
          : `the answer is ${JSON.stringify(result.answer)}`,
    },
  ];
}
