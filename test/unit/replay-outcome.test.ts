/**
 * How the replayer's verdict on one history is read: the messages are the ones Temporal's core and SDK wrote in
 * real replays of recorded histories against changed workflow code.
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { ReplayError } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { replayOutcome } from '../../src/runtime/replay-outcome';

/** A recorded history of `test/fixtures/histories`. */
function fixture(name: string): ReturnType<typeof historyFromJSON> {
  return historyFromJSON(JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'histories', name), 'utf8')));
}

const history = fixture('success.json');
/** Recorded with the run-scoped keys patch: its marker is event 5. */
const patched = fixture('run-scoped-compensation.json');

/** The SDK's wrapping of a core failure message, as `Worker.runReplayHistories` reports it. */
function wrapped(coreMessage: string): string {
  return (
    'Replay failed with a nondeterminism error. This means that the workflow code as written is not compatible ' +
    'with the history that was fed in. Details: Workflow activation completion failed: Failure { failure: ' +
    `Some(Failure { message: "${coreMessage}", source: "", stack_trace: "", encoded_attributes: None }) }`
  );
}

test('a replay without error is ok', () => {
  expect(replayOutcome(undefined, history)).toEqual({ outcome: 'ok' });
});

const NONDETERMINISM = '[TMPRL1100] Nondeterminism error: ';

test.each([
  {
    behaviour: 'a nondeterminism naming an event by id gives that event with its recorded type, and the core message',
    recorded: history,
    core: `${NONDETERMINISM}Timer machine does not handle this event: HistoryEvent(id: 6, ActivityTaskScheduled)`,
    event: { eventId: 6, eventType: 'ActivityTaskScheduled' },
  },
  {
    behaviour: 'a nondeterminism at a recorded patch the code lacks gives the patch marker event',
    recorded: patched,
    core: `${NONDETERMINISM}Non-deprecated patch marker encountered for change durable-tools/run-scoped-keys, but there is no corresponding change command!`,
    event: { eventId: 5, eventType: 'MarkerRecorded' },
  },
  {
    behaviour: 'a nondeterminism that names no event gives none, and the message',
    recorded: history,
    core: `${NONDETERMINISM}something the core did not tie to an event`,
    event: undefined,
  },
])('$behaviour', ({ recorded, core, event }) => {
  expect(replayOutcome(new DeterminismViolationError(wrapped(core)), recorded)).toEqual({
    outcome: 'nondeterministic',
    message: core,
    ...(event ? { event } : {}),
  });
});

test('any other replay error is failed, with its message', () => {
  const error = new ReplayError('Replay failed due workflow task failure. Details: no such function');
  expect(replayOutcome(error, history)).toEqual({
    outcome: 'failed',
    message: 'Replay failed due workflow task failure. Details: no such function',
  });
});
