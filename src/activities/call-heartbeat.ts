import type { PayloadStore } from '../stores/transcripts/claim-check';
import { CheckpointError } from '../tools/checkpoint-error';
import { PROGRESS_MESSAGE_MAX_CHARS, type ToolProgress } from '../contract/tool-progress';
import type { ToolLogger } from '../tools/tool-context';
import type { ToolWaiting } from '../contract/tool-limits';

/** A checkpoint as it travels: its sequence number over all attempts of the call, and the tool's state. */
export interface SavedCheckpoint {
  seq: number;
  state: unknown;
}

/**
 * The heartbeat details of a tool activity: what the wrapper leaves for the next attempt (the previous
 * delay; how many attempts really ran the tool — an attempt lost to a paused worker's poll never gets that
 * far, so it does not count against `maximumAttempts`; the last checkpoint) and what observers read (the
 * step, its latest progress, the tool's own details).
 */
export interface CallHeartbeatDetails {
  retryDelayMs?: number;
  executions?: number;
  /** The workflow's step id, so a client can attach the progress to its step. */
  stepId?: number;
  /** What the tool itself passed to `ctx.heartbeat`. */
  tool?: unknown;
  checkpoint?: SavedCheckpoint;
  progress?: ToolProgress;
  /** Present while the call waits for a slot of its tool's limits or its breaker (docs/limits.md). */
  waiting?: ToolWaiting;
}

/** Handle of a call's checkpoint in the transcript store. */
export function checkpointHandle(idempotencyKey: string): string {
  return `checkpoint:${idempotencyKey}`;
}

/**
 * The heartbeat details of one attempt. Every heartbeat (the lease's periodic ones, the tool's, a
 * checkpoint, a progress report) sends all of them, so none erases another.
 */
export class CallHeartbeat {
  private readonly details: CallHeartbeatDetails;

  /** @param send the activity's heartbeat; undefined for a local activity, which cannot heartbeat. */
  constructor(
    private readonly send: ((details: CallHeartbeatDetails) => void) | undefined,
    base: { executions: number; stepId: number; checkpoint?: SavedCheckpoint },
  ) {
    this.details = {
      executions: base.executions,
      stepId: base.stepId,
      ...(base.checkpoint ? { checkpoint: base.checkpoint } : {}),
    };
  }

  /** The last checkpoint (of this attempt or the one it resumed from). */
  get checkpoint(): SavedCheckpoint | undefined {
    return this.details.checkpoint;
  }

  beat(): void {
    this.send?.({ ...this.details });
  }

  /** The tool's own details (`ctx.heartbeat(details)`), repeated by every later heartbeat. */
  setTool(details: unknown): void {
    this.details.tool = details;
  }

  setCheckpoint(checkpoint: SavedCheckpoint): void {
    this.details.checkpoint = checkpoint;
  }

  /** The latest progress set with {@link setProgress}. */
  get progress(): ToolProgress | undefined {
    return this.details.progress;
  }

  setProgress(percent: number, message: string | undefined, now: Date): void {
    const bounded = Number.isFinite(percent) ? Math.min(100, Math.max(0, percent)) : 0;
    this.details.progress = {
      percent: Math.round(bounded * 10) / 10,
      ...(typeof message === 'string' ? { message: message.slice(0, PROGRESS_MESSAGE_MAX_CHARS) } : {}),
      at: now.toISOString(),
    };
  }

  /** What the call is waiting for before its tool runs; undefined once it runs. */
  setWaiting(waiting: ToolWaiting | undefined): void {
    if (waiting) this.details.waiting = waiting;
    else delete this.details.waiting;
  }

  /** The last heartbeat of an attempt that defers its wait for a slot: it did not run the tool, so not counted. */
  defer(executions: number): void {
    this.send?.({ ...this.details, executions });
  }

  /** The last heartbeat of an attempt that failed transiently: the chosen delay, the checkpoint kept. */
  retry(retryDelayMs: number, executions: number): void {
    this.send?.({ ...this.details, retryDelayMs, executions });
  }
}

/** What {@link saveCheckpoint} needs. */
export interface CheckpointTarget {
  heartbeat: CallHeartbeat;
  store: PayloadStore;
  idempotencyKey: string;
  runId: string;
  maxBytes: number;
  log: ToolLogger;
  /** Keep the stored checkpoint this long after each save (a long call's `resultRetention`); default: the store's. */
  keepForMs?: number;
}

/**
 * Records a checkpoint: as heartbeat details (sent now, reaching the server within the heartbeat throttle
 * interval) and in the transcript store (durable once this resolves, when the store is shared). A store
 * that cannot be reached is logged, not thrown: a job of hours does not stop for it, and the heartbeat
 * copy remains.
 *
 * @throws {@link CheckpointError} when the state is not JSON or above `maxBytes`.
 */
export async function saveCheckpoint(target: CheckpointTarget, state: unknown): Promise<void> {
  let text: string | undefined;
  try {
    text = JSON.stringify(state);
  } catch (cause) {
    throw new CheckpointError(`The checkpoint cannot be written as JSON: ${String(cause)}`, 'CHECKPOINT_NOT_JSON', {
      cause,
    });
  }
  if (text === undefined) throw new CheckpointError('The checkpoint is not a JSON value.', 'CHECKPOINT_NOT_JSON');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > target.maxBytes) {
    throw new CheckpointError(
      `The checkpoint is ${bytes} bytes as JSON; this tool allows ${target.maxBytes} (longCall.maxCheckpointBytes). Keep a cursor, not the data.`,
      'CHECKPOINT_TOO_LARGE',
    );
  }
  const checkpoint: SavedCheckpoint = { seq: (target.heartbeat.checkpoint?.seq ?? 0) + 1, state: JSON.parse(text) };
  target.heartbeat.setCheckpoint(checkpoint);
  target.heartbeat.beat();
  await target.store
    .putPayload(checkpointHandle(target.idempotencyKey), {
      runId: target.runId,
      text: JSON.stringify(checkpoint),
      ...(target.keepForMs === undefined ? {} : { expiresAt: Date.now() + target.keepForMs }),
    })
    .catch((error: unknown) =>
      target.log.warn('Could not store the checkpoint; it is kept in the heartbeat details only.', {
        key: target.idempotencyKey,
        error: String(error),
      }),
    );
}

/**
 * The checkpoint a new attempt resumes from: the newer of the one in the heartbeat details the server kept
 * and the one in the transcript store (a checkpoint stored just before a crash may not have reached the
 * server yet; a store of another process, or a memory store, may have none).
 */
export async function lastCheckpoint(
  fromHeartbeat: SavedCheckpoint | undefined,
  store: PayloadStore,
  idempotencyKey: string,
  runId: string,
  log: ToolLogger,
): Promise<SavedCheckpoint | undefined> {
  let stored: SavedCheckpoint | undefined;
  try {
    const payload = await store.getPayload(checkpointHandle(idempotencyKey));
    if (payload && payload.runId === runId) stored = JSON.parse(payload.text) as SavedCheckpoint;
  } catch (error) {
    log.warn('Could not read the stored checkpoint; resuming from the heartbeat details.', {
      key: idempotencyKey,
      error: String(error),
    });
  }
  if (!isCheckpoint(stored)) return isCheckpoint(fromHeartbeat) ? fromHeartbeat : undefined;
  if (!isCheckpoint(fromHeartbeat)) return stored;
  return stored.seq >= fromHeartbeat.seq ? stored : fromHeartbeat;
}

function isCheckpoint(value: unknown): value is SavedCheckpoint {
  return typeof value === 'object' && value !== null && typeof (value as SavedCheckpoint).seq === 'number';
}
