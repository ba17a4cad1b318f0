import { setTimeout as delay } from 'node:timers/promises';
import { thisProcessHolder } from './holder-identity';
import { ENGINE_FAILURE_TYPES, engineFailure } from '../contract/activity-protocol';
import type { ModelTurn } from '../contract/model-types';
import type { IdempotencyStore, InsertOutcome, LookupOutcome } from '../stores/idempotency/idempotency-store';
import { isLeaseLostError } from '../stores/idempotency/idempotency-store-error';
import { MemoryIdempotencyStore } from '../stores/idempotency/memory-idempotency-store';
import type { CallModelInput, ModelActivities } from './model-activities';

/** Input of `callModelOnce`: a model turn's input and the key its answer is recorded under. */
export interface RecordedModelTurnInput extends CallModelInput {
  /**
   * The turn's key: `${workflowId}/${runId}/turn/${n}`, with the current execution's run id, so a reused
   * workflow id, a reset or the next continue-as-new generation never finds another run's turn.
   */
  turnKey: string;
}

/** The model activity of the fast path. */
export interface RecordedModelActivities {
  /**
   * One model turn, asked at most once per turn key: the first answer recorded under the key is the turn,
   * for this attempt and for every later one (a retried workflow task re-runs its local activities).
   */
  callModelOnce(input: RecordedModelTurnInput): Promise<ModelTurn>;
}

/** Dependencies of {@link createRecordedModelActivities}. */
export interface RecordedModelActivityDeps {
  /** The model activity that asks the provider (`createModelActivities(...).callModel`). */
  callModel: ModelActivities['callModel'];
  /**
   * Where the turns are recorded: the worker's idempotency store (shared by the workers of the task queue, so
   * a worker that takes over a crashed one's workflow task finds its turns). Default: this process's memory.
   */
  store?: IdempotencyStore;
}

/**
 * How the recorded turn is claimed on a store without `insertIfAbsent`: a dead asker's claim is taken over at
 * once (asking has no effect).
 */
const TURN_CLAIM = {
  /** The claim's lease: a retried workflow task takes over an unfinished turn at once and asks again. */
  leaseMs: 1,
  /** Tries to read or claim the turn before giving up on the store for this attempt. */
  tries: 5,
  /** The same fingerprint for every turn: the key alone names the turn. */
  fingerprint: 'model-turn',
} as const;

/**
 * Builds `callModelOnce`, the model turn of the fast path. A local activity runs again when its workflow task
 * is retried (a worker crashed before the task completed); asked again, the model could choose other calls
 * than the ones already executed. So the turn's answer is recorded under its key before the workflow sees it,
 * and a repeated call returns the recorded answer without asking. Of two attempts racing (a paused worker
 * whose task was retried elsewhere), the first to record wins and both return its answer. With a store that
 * has `lookup` and `insertIfAbsent` (the built-in ones) a turn is one read and one commit; with another store,
 * a claim and a completion (the store's fencing refuses the later record).
 */
export function createRecordedModelActivities(deps: RecordedModelActivityDeps): RecordedModelActivities {
  const store = deps.store ?? new MemoryIdempotencyStore();
  const { owner } = thisProcessHolder();
  const ask = (request: CallModelInput) => () => deps.callModel(request);
  const { lookup, insertIfAbsent } = store;
  if (lookup !== undefined && insertIfAbsent !== undefined) {
    const recorder: TurnRecorder = {
      lookup: (key) => lookup.call(store, key, TURN_CLAIM.fingerprint),
      // No effect depends on a turn before one of its calls claims a key in this store, which makes it durable.
      insert: (key, turn) =>
        insertIfAbsent.call(store, key, TURN_CLAIM.fingerprint, turn, { durableWithNextCommit: true }),
    };
    return {
      callModelOnce: async ({ turnKey, ...request }) => recordInOneCommit(recorder, turnKey, ask(request)),
    };
  }
  return {
    callModelOnce: async ({ turnKey, ...request }) => claimAndComplete(store, owner, turnKey, ask(request)),
  };
}

/** The two calls of a store that records a turn in one commit. */
interface TurnRecorder {
  lookup(key: string): Promise<LookupOutcome>;
  insert(key: string, turn: ModelTurn): Promise<InsertOutcome>;
}

/**
 * The turn with a store that has `insertIfAbsent`: read the record (no commit); when absent, ask the model and
 * insert its answer in one commit. Of two attempts racing, the first insert wins and the other one gets the
 * winner's answer back; a failed turn writes nothing.
 */
async function recordInOneCommit(
  recorder: TurnRecorder,
  key: string,
  ask: () => Promise<ModelTurn>,
): Promise<ModelTurn> {
  for (let tries = 1; ; tries += 1) {
    const found = await recorder.lookup(key).catch((error: unknown) => {
      throw storeUnavailable(key, error);
    });
    let outcome: LookupOutcome | InsertOutcome = found;
    if (found.state === 'absent') {
      const turn = await ask();
      outcome = await recorder.insert(key, turn).catch((error: unknown) => {
        throw storeUnavailable(key, error);
      });
      if (outcome.state === 'inserted') return turn;
    }
    if (outcome.state === 'completed') return outcome.result as ModelTurn;
    if (outcome.state !== 'in_flight') throw unusable(key, outcome.state);
    // A claim by a worker that records turns with begin + complete: wait for its lease.
    await delay(Math.max(1, outcome.retryAfterMs));
    if (tries >= TURN_CLAIM.tries) throw storeUnavailable(key, new Error(`no usable record after ${tries} tries`));
  }
}

/** The turn with a store that has no `insertIfAbsent`: claim the key (1 ms lease), ask, complete. */
async function claimAndComplete(
  store: IdempotencyStore,
  owner: string,
  turnKey: string,
  ask: () => Promise<ModelTurn>,
): Promise<ModelTurn> {
  for (let tries = 1; ; tries += 1) {
    const outcome = await store
      .begin(turnKey, TURN_CLAIM.fingerprint, { owner, leaseMs: TURN_CLAIM.leaseMs })
      .catch((error: unknown) => {
        throw storeUnavailable(turnKey, error);
      });
    if (outcome.state === 'completed') return outcome.result as ModelTurn;
    if (outcome.state === 'started' || outcome.state === 'outcome_unknown') {
      const recorded = await askAndRecord(store, turnKey, outcome.token, ask);
      if (recorded) return recorded;
    } else if (outcome.state === 'in_flight') {
      await delay(Math.max(1, outcome.retryAfterMs));
    } else {
      throw unusable(turnKey, outcome.state);
    }
    if (tries >= TURN_CLAIM.tries) {
      throw storeUnavailable(turnKey, new Error(`no usable record after ${tries} tries`));
    }
  }
}

function unusable(key: string, state: string): unknown {
  return engineFailure(
    ENGINE_FAILURE_TYPES.MODEL_TURN_STORE_UNAVAILABLE,
    `The record of model turn ${key} is unusable (${state}).`,
  );
}

/**
 * Asks the model and records its answer; undefined when another attempt took the turn over meanwhile (its
 * record wins: the caller reads it). A failed turn releases the claim, so the next attempt asks afresh.
 */
async function askAndRecord(
  store: IdempotencyStore,
  key: string,
  token: string,
  ask: () => Promise<ModelTurn>,
): Promise<ModelTurn | undefined> {
  let turn: ModelTurn;
  try {
    turn = await ask();
  } catch (error) {
    await store.release(key, token).catch(() => false);
    throw error;
  }
  try {
    await store.complete(key, token, turn);
    return turn;
  } catch (error) {
    if (isLeaseLostError(error)) return undefined;
    throw storeUnavailable(key, error);
  }
}

function storeUnavailable(key: string, cause: unknown): unknown {
  return engineFailure(
    ENGINE_FAILURE_TYPES.MODEL_TURN_STORE_UNAVAILABLE,
    `The model turn ${key} could not be recorded or read: ${cause instanceof Error ? cause.message : String(cause)}`,
    { retryable: true, nextRetryDelayMs: 500, ...(cause instanceof Error ? { cause } : {}) },
  );
}
