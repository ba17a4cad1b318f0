import { setTimeout as delay } from 'node:timers/promises';
import { fingerprint } from '../stores/idempotency/canonical-json';
import type { BeginOutcome, IdempotencyStore, StoredFailure } from '../stores/idempotency/idempotency-store';
import type { Tool } from '../tools/define-tool';
import type { ToolContext } from '../tools/tool-context';
import { OUTCOME_UNKNOWN_EXPLANATION } from '../failures/retry-decision';
import {
  isToolErrorCode,
  isToolErrorObservation,
  TOOL_ERROR_CODES,
  toolFailure,
  type ToolErrorObservation,
  type ToolFailureFacts,
} from '../contract/activity-protocol';
import type { ToolCallLease } from './tool-call-lease';

/** Smallest wait before asking again about a key another attempt holds. */
export const IN_FLIGHT_RETRY = { minDelayMs: 100, slackMs: 50 } as const;

/** Wait before the next attempt when `reconcile` itself failed (the key stays held until its lease ends). */
export const RECONCILE_RETRY_DELAY_MS = 1_000;

/**
 * The dead-holder takeover of {@link claimKey}: a key held by a process proved dead (same kernel and pid
 * namespace, the process gone) is taken over at once instead of after its lease and takeover grace, and the
 * new owner waits `drainMs` before it asks the downstream (what the dead process handed to the kernel before it
 * died arrives at network latency). See docs/exactly-once.md, assumption 2'.
 */
export interface DeadHolderTakeover {
  /** True only when the process that wrote this owner label provably no longer exists. */
  isDead(owner: string): boolean;
  /** Wait after the takeover before `reconcile` or a re-run, counted from when the holder was known dead. */
  drainMs: number;
  /**
   * What is left of the drain for a holder found dead (`drainMs` less the time since this process first knew
   * it dead: death-witness.ts). Default: the whole `drainMs`.
   */
  drainLeftMs?(owner: string): number;
  /** Runs during the drain, after a takeover (best effort: it must not throw). */
  onTakeover?: () => Promise<void>;
}

/**
 * Default drain of a dead-holder takeover: 1 s, the time a request the dead process had handed to the kernel
 * (complete in its socket's send buffer) may take to reach the downstream: network latency, a few TCP
 * retransmissions on a local network. A request it had not finished writing reaches no one whole.
 */
export const DEAD_HOLDER_DRAIN_MS = 1_000;

/** What the wrapper should do after consulting the key store. */
export type KeyDecision = { kind: 'execute'; token: string } | { kind: 'replay'; output: unknown };

/** Options of {@link claimKey}. */
export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** See {@link BeginOptions.takeoverGraceMs}: how long a request sent by the previous holder may take to land. */
  takeoverGraceMs: number;
  /** Attempts Temporal allows this activity (a wait for another holder may use them, not the tool's own). */
  maximumAttempts: number;
  /** Told when the key is owned, so it renews the lease from then on (reconcile included). */
  lease: ToolCallLease;
  /** Told what a `reconcile` check found (for telemetry). */
  onReconcile?: (result: 'done' | 'not_done' | 'failed') => void;
  /** Take a dead holder's key over at once (when the store has `takeOverDeadHolder`). Default: never. */
  deadHolder?: DeadHolderTakeover;
}

/** A stored permanent failure: the observation the model saw and the saga's facts. */
interface StoredToolFailure extends StoredFailure {
  details: { observation: ToolErrorObservation; facts: ToolFailureFacts };
}

/** Converts a final failure into what the store keeps for replay. */
export function storedFailureOf(observation: ToolErrorObservation, facts: ToolFailureFacts): StoredToolFailure {
  return {
    code: observation.code,
    message: observation.message,
    hint: observation.hint,
    details: { observation, facts },
  };
}

/**
 * Claims the call's idempotency key and decides, after Stripe's semantics: run it, replay a stored result or
 * failure, refuse a key reused with other arguments, wait for an attempt still in flight, or — when an earlier
 * attempt died holding the key — reconcile with the downstream, re-run a tool that is idempotent downstream,
 * or give up with OUTCOME_UNKNOWN. Never a silent second effect.
 *
 * @throws the `ApplicationFailure` the activity must throw (replayed failure, conflict, in flight, unknown).
 */
export async function claimKey(
  store: IdempotencyStore,
  tool: Tool,
  input: unknown,
  ctx: ToolContext,
  options: ClaimOptions,
): Promise<KeyDecision> {
  const entry = tool.contract.catalogEntry;
  const key = ctx.idempotencyKey;
  const print = fingerprint({ tool: entry.name, input });
  let sentAt = options.lease.mark();
  let outcome: BeginOutcome = await store.begin(key, print, {
    owner: options.owner,
    leaseMs: options.leaseMs,
    takeoverGraceMs: options.takeoverGraceMs,
  });
  const { deadHolder } = options;
  if (outcome.state === 'in_flight' && deadHolder && store.takeOverDeadHolder && deadHolder.isDead(outcome.owner)) {
    // The holder's process no longer exists (a paused one still does): nothing more can leave it.
    sentAt = options.lease.mark();
    outcome = await store.takeOverDeadHolder(key, print, {
      owner: options.owner,
      leaseMs: options.leaseMs,
      takeoverGraceMs: options.takeoverGraceMs,
      deadOwner: outcome.owner,
    });
  }
  switch (outcome.state) {
    case 'started':
      options.lease.owned(store, outcome.token, sentAt, outcome.fencingToken);
      return { kind: 'execute', token: outcome.token };
    case 'completed':
      return { kind: 'replay', output: outcome.result };
    case 'failed': {
      const details = (outcome.error as Partial<StoredToolFailure>).details;
      const stored = details?.observation;
      const observation: ToolErrorObservation = isToolErrorObservation(stored)
        ? stored
        : {
            status: 'error',
            code: isToolErrorCode(outcome.error.code) ? outcome.error.code : TOOL_ERROR_CODES.INTERNAL,
            message: outcome.error.message,
            hint: outcome.error.hint ?? 'Do not repeat this call.',
            retryable: false,
            attempts: ctx.attempt,
          };
      throw toolFailure(observation, details?.facts ?? { mayHaveHadEffect: true });
    }
    case 'conflict':
      throw toolFailure(
        {
          status: 'error',
          code: TOOL_ERROR_CODES.IDEMPOTENCY_CONFLICT,
          message: `The idempotency key ${key} was already used for a call of "${entry.name}" with different arguments.`,
          hint: 'This step cannot be repeated with other arguments; make a new tool call instead.',
          retryable: false,
          attempts: ctx.attempt,
        },
        { mayHaveHadEffect: false },
      );
    case 'in_flight': {
      const observation: ToolErrorObservation = {
        status: 'error',
        code: TOOL_ERROR_CODES.CONFLICT,
        message: `Another attempt of this call (${outcome.owner}) is still running.`,
        hint: 'Wait for its result; do not start the same action again.',
        retryable: true,
        attempts: ctx.attempt,
      };
      if (ctx.attempt >= options.maximumAttempts) throw toolFailure(observation, { mayHaveHadEffect: true });
      // The store's own count (its clock), so a skewed worker clock cannot shorten the wait.
      const wait = Math.max(IN_FLIGHT_RETRY.minDelayMs, outcome.retryAfterMs + IN_FLIGHT_RETRY.slackMs);
      throw toolFailure(observation, { mayHaveHadEffect: true }, wait);
    }
    case 'outcome_unknown':
      // The previous holder's lease ran out more than the takeover grace ago: it can no longer send (its
      // local deadline passed before that), and what it sent has had the grace to land downstream. Or its
      // process is gone (a dead-holder takeover): it can no longer send, and what it sent gets the drain.
      options.lease.owned(store, outcome.token, sentAt, outcome.fencingToken);
      if (outcome.previousHolderDead) {
        // Taken over from a dead process before its lease ran out: give what it sent just before it died the
        // drain to land downstream before asking what happened (the lease is renewed meanwhile).
        const drainMs = deadHolder?.drainLeftMs?.(outcome.previousOwner) ?? deadHolder?.drainMs ?? 0;
        ctx.log.warn('Took the idempotency key over from a dead holder; draining its requests.', {
          tool: entry.name,
          key,
          previousOwner: outcome.previousOwner,
          drainMs,
        });
        await Promise.all([drainMs > 0 ? delay(drainMs) : undefined, deadHolder?.onTakeover?.()]);
      }
      return resolveUnknownOutcome(store, tool, ctx, outcome.token, outcome.previousOwner, options.onReconcile);
  }
}

async function resolveUnknownOutcome(
  store: IdempotencyStore,
  tool: Tool,
  ctx: ToolContext,
  token: string,
  previousOwner: string,
  onReconcile: ClaimOptions['onReconcile'],
): Promise<KeyDecision> {
  const entry = tool.contract.catalogEntry;
  ctx.log.warn('An earlier attempt died holding the idempotency key; its outcome is unknown.', {
    tool: entry.name,
    key: ctx.idempotencyKey,
    previousOwner,
  });
  if (tool.hooks.reconcile) {
    let found: Awaited<ReturnType<NonNullable<typeof tool.hooks.reconcile>>>;
    try {
      found = await tool.hooks.reconcile(ctx.idempotencyKey, ctx);
    } catch (error) {
      onReconcile?.('failed');
      // Keep the key (do not release it): the next attempt must reconcile again, never run blindly.
      throw toolFailure(
        {
          status: 'error',
          code: TOOL_ERROR_CODES.UNAVAILABLE,
          message: `Could not check whether an earlier attempt of "${entry.name}" took effect: ${error instanceof Error ? error.message : String(error)}`,
          hint: 'The engine will check again; do not repeat the action yourself.',
          retryable: true,
          attempts: ctx.attempt,
        },
        { mayHaveHadEffect: true },
        RECONCILE_RETRY_DELAY_MS,
      );
    }
    onReconcile?.(found.done ? 'done' : 'not_done');
    if (found.done) {
      const output = tool.contract.spec.output.parse(found.output);
      await store.complete(ctx.idempotencyKey, token, output);
      return { kind: 'replay', output };
    }
    return { kind: 'execute', token };
  }
  if (entry.idempotent || entry.effect === 'read-only') return { kind: 'execute', token };
  if (ctx.resumeFrom !== undefined) {
    // The tool checkpointed: everything up to the checkpoint is done; it resumes from there (the unit that
    // was running may run again, which is why each unit carries its own key downstream).
    ctx.log.info('Resuming from the last checkpoint of the attempt that died.', { key: ctx.idempotencyKey });
    return { kind: 'execute', token };
  }
  const observation: ToolErrorObservation = {
    status: 'error',
    code: TOOL_ERROR_CODES.OUTCOME_UNKNOWN,
    message: `${OUTCOME_UNKNOWN_EXPLANATION.message} (an earlier attempt of "${entry.name}" stopped without recording its result)`,
    hint: OUTCOME_UNKNOWN_EXPLANATION.hint,
    retryable: false,
    attempts: ctx.attempt,
  };
  const facts = { mayHaveHadEffect: true };
  await store.fail(ctx.idempotencyKey, token, storedFailureOf(observation, facts));
  throw toolFailure(observation, facts);
}
