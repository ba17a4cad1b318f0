import { ApplicationFailure } from '@temporalio/common';
import { TOOL_ERROR_CODES, toolFailure, type ToolFailureFacts } from '../contract/activity-protocol';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import type { ToolActivityInput } from '../contract/tool-activity-types';
import { argumentsDigest } from './arguments-digest';

/** The digest of a call's validated arguments, or undefined when they are not JSON (nothing can match them). */
export function validatedDigest(validated: unknown): string | undefined {
  try {
    return argumentsDigest(validated);
  } catch {
    return undefined;
  }
}

/**
 * The engine's half of a dry run, decided after the arguments were validated and before anything else: a
 * call of a dry run whose tool has effects (or any tool, when read-only tools are answered from the record)
 * never reaches the tool's code. It is answered by the first recorded call of the same tool with the same
 * digest of validated arguments, or refused. A compensation in a dry run is refused outright.
 *
 * @returns `run` when the call may run for real (not dry, or a read-only tool under `readOnlyTools: 'run'`),
 * else the source step that answers it.
 * @throws a non-retryable `DRY_RUN_NO_RECORD` failure that had no effect.
 */
export function dryRunDecision(
  entry: ToolCatalogEntry,
  input: ToolActivityInput,
  digest: string | undefined,
): { kind: 'run' } | { kind: 'recorded'; sourceStep: number } {
  const dryRun = input.dryRun;
  if (dryRun === undefined) return { kind: 'run' };
  if (typeof input.compensationOf === 'string') {
    throw refusal(
      `"${entry.name}" would undo a step of a dry run, which has no effects to undo; nothing was run.`,
      digest,
    );
  }
  // An agent tool's activity is read-only, but its call stands for a whole child run: always from the record.
  if (entry.effect === 'read-only' && entry.agent === undefined && dryRun.readOnlyTools === 'run')
    return { kind: 'run' };
  const candidates = Array.isArray(dryRun.candidates) ? dryRun.candidates : [];
  const match = digest === undefined ? undefined : candidates.find((candidate) => candidate.digest === digest);
  if (match) return { kind: 'recorded', sourceStep: match.stepId };
  throw refusal(
    candidates.length === 0
      ? `This is a dry run and the recorded run made no (further) call of "${entry.name}" to answer this one from; nothing was run.`
      : `This is a dry run and no recorded call of "${entry.name}" had these arguments (${candidates.length} recorded call${candidates.length === 1 ? '' : 's'} of it with other arguments); nothing was run.`,
    digest,
  );
}

/**
 * The input of a call that came in under a dry run's activity type (`dry:<tool>`): dry whatever it says; without
 * its own `dryRun` it has no record (every call with effects is refused).
 */
export function forcedDry(input: ToolActivityInput): ToolActivityInput {
  if (!input || typeof input !== 'object') return input;
  return input.dryRun ? input : { ...input, dryRun: { readOnlyTools: 'record', candidates: [] } };
}

/** Adds the digest of the validated arguments to a tool failure's facts (a later dry run matches on it). */
export function withArgumentsDigest(error: unknown, digest: string | undefined): unknown {
  if (digest === undefined || !(error instanceof ApplicationFailure) || !Array.isArray(error.details)) return error;
  const facts = error.details[1] as ToolFailureFacts | undefined;
  if (facts && typeof facts === 'object' && typeof facts.mayHaveHadEffect === 'boolean') facts.argumentsDigest = digest;
  return error;
}

function refusal(message: string, digest: string | undefined): ApplicationFailure {
  return toolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.DRY_RUN_NO_RECORD,
      message,
      hint: 'This is a dry run: only calls the recorded run made can be answered. Nothing was executed; finish or try another step.',
      retryable: false,
      attempts: 0,
    },
    { mayHaveHadEffect: false, ...(digest !== undefined ? { argumentsDigest: digest } : {}) },
  );
}
