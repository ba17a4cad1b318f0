import { shortened } from '../contract/bound-observation';
import {
  argumentsHandle,
  isOversizedArguments,
  isStoredOutputReference,
  outputHandle,
  type StoredArgumentsReference,
  type StoredOutputReference,
} from '../contract/claim-check-reference';
import { formatBytes, jsonByteLength, PAYLOAD_LIMITS, truncateText } from '../contract/payload-limits';
import type { ModelToolCall } from '../contract/model-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { budgetOf } from '../contract/tool-budget';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../contract/activity-protocol';
import type { AgentRunState, StepRecord } from '../contract/agent-run-types';

/** JSON bytes of a call's arguments, or the size the model activity's oversized marker reports in their place. */
export function argumentBytes(raw: unknown): number {
  return isOversizedArguments(raw) ? raw.bytes : jsonByteLength(raw);
}

/**
 * The refusal of a call whose raw arguments are above the tool's limit (or that the model activity already
 * replaced by an oversized marker), measured on what the model sent; undefined when they fit. `bytes` is
 * {@link argumentBytes} of `raw`, when the caller has measured it.
 */
export function argumentsTooLarge(
  raw: unknown,
  entry: ToolCatalogEntry,
  bytes: number = argumentBytes(raw),
): ToolErrorObservation | undefined {
  const limit = budgetOf(entry).maxArgumentBytes;
  if (!isOversizedArguments(raw) && bytes <= limit) return undefined;
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.INVALID_ARGUMENTS,
    message: `The arguments are too large: ${formatBytes(bytes)}, and "${entry.name}" accepts at most ${formatBytes(limit)}. Nothing was executed.`,
    hint: 'Send a much smaller request: pass references (ids, URLs, handles of stored outputs) instead of the data itself, or split the work into several calls.',
    retryable: false,
    attempts: 0,
  };
}

/**
 * A call's arguments as the transcript, the run state and the result keep them: raw when small. `bytes` is
 * {@link argumentBytes} of `raw`, when the caller has measured it.
 */
export function recordedArguments(
  raw: unknown,
  maxChars: number = PAYLOAD_LIMITS.recordedArgumentChars,
  bytes: number = argumentBytes(raw),
): unknown {
  if (bytes <= maxChars && !isOversizedArguments(raw)) return raw;
  return shortened(raw, bytes, Math.min(maxChars, 500), 'The arguments were too long to repeat here.');
}

/** The tool calls of a turn as the transcript keeps them: arguments shortened, a bounded total. */
export function transcriptToolCalls(calls: readonly ModelToolCall[]): ModelToolCall[] {
  const perCall = Math.max(200, Math.floor((32 * 1024) / Math.max(1, calls.length)));
  return calls.map((call) => ({ ...call, arguments: recordedArguments(call.arguments, perCall) }));
}

/**
 * How a compensation carries the forward call's arguments: inline when small, else a reference to the copy
 * the forward activity stores (`storeArguments`). `bytes` is their JSON size, when the caller has measured it.
 */
export function compensationArguments(
  raw: unknown,
  idempotencyKey: string,
  bytes: number = jsonByteLength(raw),
): { value: unknown; storeArguments: boolean } {
  if (bytes <= PAYLOAD_LIMITS.compensationInlineBytes) return { value: raw, storeArguments: false };
  const reference: StoredArgumentsReference = {
    $durableTools: 'stored-arguments',
    handle: argumentsHandle(idempotencyKey),
    bytes,
  };
  return { value: reference, storeArguments: true };
}

/** How a compensation carries the forward call's output: inline when small, else the stored copy's reference. */
export function compensationOutput(output: unknown, idempotencyKey: string): unknown {
  if (isStoredOutputReference(output)) return output;
  const bytes = jsonByteLength(output);
  if (bytes <= PAYLOAD_LIMITS.compensationInlineBytes) return output;
  const reference: StoredOutputReference = {
    $durableTools: 'stored-output',
    handle: outputHandle(idempotencyKey),
    bytes,
    approxTokens: 0,
    chars: 0,
    preview: '',
    hint: 'Stored by the tool activity for the compensation.',
  };
  return reference;
}

/**
 * What the state query and the workflow result return: the run state within
 * {@link PAYLOAD_LIMITS.runViewBytes}. Steps are bounded one by one; when there are too many, the newest keep
 * their details (up to half the budget), older ones lose their observation output and arguments, and the
 * oldest are left out (counted in `omittedSteps`; they are in the workflow's history).
 */
export function boundedRunView(state: AgentRunState): AgentRunState {
  const view: AgentRunState = {
    ...state,
    goal: truncateText(state.goal, 4_000),
    ...(state.answer !== undefined ? { answer: truncateText(state.answer, PAYLOAD_LIMITS.modelTurnTextChars) } : {}),
    ...(state.reason !== undefined ? { reason: truncateText(state.reason, PAYLOAD_LIMITS.errorTextChars * 2) } : {}),
    policyWarnings: state.policyWarnings.slice(0, 20).map((w) => truncateText(w, 500)),
    steps: [],
  };
  const budget = PAYLOAD_LIMITS.runViewBytes - jsonByteLength(view) - 64;
  const kept: StepRecord[] = [];
  let used = 0;
  let index = state.steps.length - 1;
  for (; index >= 0; index--) {
    let step = boundStep(state.steps[index]!);
    let size = jsonByteLength(step) + 1;
    if (used + size > budget / 2) {
      step = compactStep(step);
      size = jsonByteLength(step) + 1;
    }
    if (used + size > budget) break;
    kept.push(step);
    used += size;
  }
  view.steps = kept.reverse();
  return index >= 0 ? { ...view, omittedSteps: index + 1 } : view;
}

function compactStep(step: StepRecord): StepRecord {
  const compact: StepRecord = { ...step, arguments: recordedArguments(step.arguments, 100) };
  if (compact.observation?.status === 'ok') {
    compact.observation = {
      ...compact.observation,
      output: { $durableTools: 'omitted', note: 'See the step in history.' },
    };
  } else if (compact.observation) {
    compact.observation = { ...compact.observation, message: truncateText(compact.observation.message, 200), hint: '' };
    delete compact.observation.issues;
  }
  return compact;
}

function boundStep(step: StepRecord): StepRecord {
  return {
    ...step,
    tool: truncateText(step.tool, 200),
    toolCallId: truncateText(step.toolCallId, 200),
    arguments: recordedArguments(step.arguments),
    ...(step.compensationError !== undefined
      ? { compensationError: truncateText(step.compensationError, PAYLOAD_LIMITS.errorTextChars) }
      : {}),
  };
}
