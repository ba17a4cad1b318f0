import { z } from 'zod';
import {
  CallHeartbeat,
  lastCheckpoint,
  saveCheckpoint,
  type CallHeartbeatDetails,
} from '../../src/activities/call-heartbeat';
import { defineTool } from '../../src/tools/define-tool';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';

const base = {
  name: 'crunch',
  description: 'Crunches numbers for hours.',
  input: z.object({}),
  output: z.object({}),
  effect: 'read-only' as const,
  idempotent: true,
};
const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe('long-call declaration', () => {
  test('a long call without timeouts of its own gets its deadline as attempt timeout and retry deadline', () => {
    const entry = defineTool({ ...base, longCall: { heartbeatTimeout: '20s', deadline: '2h' } }).catalogEntry;
    expect(entry.longCall).toEqual({
      heartbeatTimeoutMs: 20_000,
      deadlineMs: 7_200_000,
      onCancel: 'abort',
      maxCheckpointBytes: 16 * 1024,
    });
    expect(entry.timeoutMs).toBe(7_200_000);
    expect(entry.retry.totalDeadlineMs).toBe(7_200_000);
  });

  test('a heartbeat timeout not shorter than the deadline is refused', () => {
    expect(() => defineTool({ ...base, longCall: { heartbeatTimeout: '1h', deadline: '1h' } })).toThrow(
      expect.objectContaining({ name: 'ToolDefinitionError', code: 'INVALID_OPTION' }),
    );
  });

  test('an unknown cancellation mode is refused', () => {
    expect(() => defineTool({ ...base, longCall: { onCancel: 'later' as 'abort' } })).toThrow(/onCancel/);
  });

  test('a long call cannot run as a local activity', () => {
    expect(() => defineTool({ ...base, execution: 'local', longCall: {} })).toThrow(/local/);
  });
});

describe('checkpoints', () => {
  const target = (heartbeat: CallHeartbeat, store = new MemoryTranscriptStore()) => ({
    heartbeat,
    store,
    idempotencyKey: 'run-1/1',
    runId: 'run-1',
    maxBytes: 64,
    log: silent,
  });

  test('a checkpoint is sent as heartbeat details with everything else the call reported', async () => {
    const sent: CallHeartbeatDetails[] = [];
    const heartbeat = new CallHeartbeat((details) => sent.push(details), { executions: 1, stepId: 1 });
    heartbeat.setProgress(40, 'unit 4 of 10', new Date(0));
    await saveCheckpoint(target(heartbeat), { next: 4 });
    expect(sent.at(-1)).toEqual({
      executions: 1,
      stepId: 1,
      checkpoint: { seq: 1, state: { next: 4 } },
      progress: { percent: 40, message: 'unit 4 of 10', at: new Date(0).toISOString() },
    });
  });

  test('a checkpoint above the tool’s limit is refused with CHECKPOINT_TOO_LARGE', async () => {
    const heartbeat = new CallHeartbeat(() => {}, { executions: 1, stepId: 1 });
    await expect(saveCheckpoint(target(heartbeat), { data: 'x'.repeat(100) })).rejects.toMatchObject({
      name: 'CheckpointError',
      code: 'CHECKPOINT_TOO_LARGE',
    });
  });

  test('a new attempt resumes from the newer of the stored and the heartbeat checkpoint', async () => {
    const store = new MemoryTranscriptStore();
    const heartbeat = new CallHeartbeat(() => {}, { executions: 1, stepId: 1 });
    await saveCheckpoint(target(heartbeat, store), { next: 1 });
    await saveCheckpoint(target(heartbeat, store), { next: 2 });
    const older = { seq: 1, state: { next: 1 } };
    expect(await lastCheckpoint(older, store, 'run-1/1', 'run-1', silent)).toEqual({ seq: 2, state: { next: 2 } });
    const newer = { seq: 3, state: { next: 3 } };
    expect(await lastCheckpoint(newer, store, 'run-1/1', 'run-1', silent)).toEqual(newer);
  });

  test('another run cannot resume from a checkpoint stored under the same key', async () => {
    const store = new MemoryTranscriptStore();
    const heartbeat = new CallHeartbeat(() => {}, { executions: 1, stepId: 1 });
    await saveCheckpoint(target(heartbeat, store), { next: 1 });
    expect(await lastCheckpoint(undefined, store, 'run-1/1', 'run-2', silent)).toBeUndefined();
  });
});
