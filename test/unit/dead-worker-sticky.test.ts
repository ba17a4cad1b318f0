import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { announceWorker } from '../../src/activities/dead-worker-sticky';
import { processOwner, thisProcessHolder } from '../../src/activities/holder-identity';

/**
 * A retried attempt whose previous worker process is provably dead asks the server to forget the run's sticky
 * worker (docs/operations.md, "Recovery after a crash"); one whose previous worker may be alive does not.
 */

function environment(attempt: number, previousWorker: string | undefined, lastFailure?: unknown) {
  const resets: unknown[] = [];
  const client = {
    withAbortSignal: (_signal: AbortSignal, call: () => Promise<unknown>) => call(),
    workflowService: {
      resetStickyTaskQueue: async (request: unknown) => {
        resets.push(request);
        return {};
      },
      describeWorkflowExecution: async () => ({
        pendingActivities: [{ activityId: 'other' }, { activityId: 'act-1', lastFailure }],
      }),
    },
  } as unknown as Client;
  const env = new MockActivityEnvironment(
    {
      attempt,
      activityId: 'act-1',
      workflowNamespace: 'ns',
      workflowExecution: { workflowId: 'wf', runId: 'run' },
      ...(previousWorker ? { heartbeatDetails: { worker: previousWorker } } : {}),
    },
    { client },
  );
  const beats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => beats.push(details));
  return { env, resets, beats };
}

const { identity, owner } = thisProcessHolder();
const onLinux = identity ? test : test.skip;

onLinux('resets the sticky queue on a retry whose previous worker process is gone', async () => {
  const dead = processOwner('host', { ...identity!, startTime: '1' });
  const { env, resets, beats } = environment(2, dead);

  await env.run(async () => announceWorker());

  expect(resets).toEqual([{ namespace: 'ns', execution: { workflowId: 'wf', runId: 'run' } }]);
  expect(beats).toEqual([{ worker: owner }]);
});

test('leaves the sticky queue alone when the previous worker is alive or unknown, or absent without a timeout, and on a first attempt', async () => {
  for (const [attempt, previous] of [
    [2, owner],
    [2, 'host:1'],
    [2, undefined],
    [1, identity ? processOwner('host', { ...identity, startTime: '1' }) : undefined],
  ] as const) {
    const { env, resets, beats } = environment(attempt, previous);
    await env.run(async () => announceWorker());
    expect(resets).toEqual([]);
    expect(beats).toEqual([{ worker: owner }]);
  }
});

test('resets the sticky queue on a retry whose previous attempt sent no heartbeat and timed out', async () => {
  const timedOut = environment(2, undefined, { message: 'heartbeat', timeoutFailureInfo: { timeoutType: 4 } });
  await timedOut.env.run(async () => announceWorker());
  expect(timedOut.resets).toHaveLength(1);

  const failed = environment(2, undefined, { message: 'rate limited', applicationFailureInfo: { type: 'X' } });
  await failed.env.run(async () => announceWorker());
  expect(failed.resets).toEqual([]);
});
