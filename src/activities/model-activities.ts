import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { StreamStore } from '../stores/streams/stream-store';
import type { StreamSegment } from '../stores/streams/stream-events';
import { openTurnStream, type TurnStream } from './turn-stream';
import { MODEL_CALL_LIMITS } from '../contract/model-call-limits';
import type { ModelProvider, ModelRequest, ModelSettings, ModelTurn, TranscriptMessage } from '../contract/model-types';
import { scriptedModel } from '../model/scripted-model';
import { MODEL_RETRY } from '../model/model-failure';
import { modelFacingCatalog } from '../contract/tool-disclosure';
import type { ToolRegistry } from '../tools/tool-registry';
import { MemoryTranscriptStore } from '../stores/transcripts/memory-transcript-store';
import type { TranscriptStore } from '../stores/transcripts/transcript-store';
import { emptyTurnProblem, recordedToolArguments, turnExcerpt } from '../model/model-turn-check';
import { jsonModelTurn, notJsonMessage } from '../model/json-model-turn';
import { ENGINE_FAILURE_TYPES, engineFailure } from '../contract/activity-protocol';
import { modelVisibleTools } from '../contract/tool-visibility';
import { withFetchToolResult } from '../contract/fetch-tool-result';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { breakerRefusal, callWithDeadline, modelFailure } from './model-call';
import { createProviderBreaker, providerBreakerKey, type ProviderBreaker } from '../model/provider-breaker';
import { isModelOutageType } from '../contract/model-outage';
import { sharedProbeSlot } from './shared-probe-slot';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import { announceWorker } from './dead-worker-sticky';
import { boundModelTurn } from '../contract/bound-model-turn';
import { PAYLOAD_LIMITS, truncateText } from '../contract/payload-limits';
import type { AgentOutputSpec } from '../contract/agent-output';
import { checkAnswer } from '../guard/check-answer';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { createGenAiClientMetrics, tracedModelCall, type ModelCallTelemetry } from '../telemetry/model-call-telemetry';

/** Dependencies of {@link createModelActivities}. */
export interface ModelActivityDeps {
  /** The tools of this worker: the model is shown the catalog of the run's allowed tools. */
  registry: ToolRegistry;
  /** Model providers by name; `scripted` is always available. */
  providers?: Record<string, ModelProvider>;
  /** Where run transcripts live (default: in this process's memory). */
  transcripts?: TranscriptStore;
  /** Deadline of one model turn unless the run's settings say `turnTimeoutMs` (default 90 s). */
  turnTimeoutMs?: number;
  /** Uniform random source in [0, 1) for the jitter of model retries (default `Math.random`). */
  random?: () => number;
  /**
   * Where turns are streamed live, out of band (docs/streaming.md): every attempt of a turn writes a segment of
   * text deltas and tool-call starts for `streamAgentRun` and the SSE endpoint. Without one nothing is streamed
   * and providers answer whole turns.
   */
  streams?: StreamStore;
  /**
   * The breaker of each provider and model, shared by the worker's runs (default: one in this process's memory):
   * while a provider is down one call at a time probes it (docs/models.md, "Provider outages").
   */
  breaker?: ProviderBreaker;
  /**
   * Where the probe of a provider that is down is shared with the other workers of the store (default: the
   * breaker alone, one probe per worker): the idempotency store and this worker's name.
   */
  probeSlots?: { store: IdempotencyStore; owner: string };
  /** Where the GenAI client metrics of the model calls go (default: the global meter provider). */
  meterProvider?: MeterProvider;
  /** The worker's tracer provider when it traces: each provider call is then a `chat` span (docs/telemetry.md). */
  tracerProvider?: TracerProvider;
}

/**
 * Input of `callModel`. The workflow sends only the messages the transcript store does not have yet,
 * so the history grows by a constant amount per step instead of by the whole transcript.
 */
export interface CallModelInput {
  /** Transcript key of the run: workflow id and first run id (stable across continue-as-new). */
  runKey: string;
  goal: string;
  settings: ModelSettings;
  /** The agent's standing instructions (the system prompt of every turn), when the run has them. */
  instructions?: string;
  /** The shape of the final answer, when the run has one: the activity checks an answer against it. */
  output?: AgentOutputSpec;
  /** Tool names the model may see; all tools of the worker when omitted. */
  allowedTools?: readonly string[];
  /** Model turns taken before this one, over the whole run. */
  turn: number;
  /** Position of `messages[0]` in the transcript. */
  fromIndex: number;
  /** New transcript messages (or the whole transcript, with `fromIndex` 0). */
  messages: TranscriptMessage[];
  /**
   * `'summary'` when the run's catalog is over its disclosure budget: the model sees names, one-line
   * descriptions and `describe_tools` instead of every schema. Absent means the full catalog.
   */
  toolView?: 'summary';
  /** Tools of the workflow itself the model sees too: a conversation's `undo_step` (docs/conversations.md). */
  extraTools?: ToolCatalogEntry[];
}

const tokenCount = z.number().int().nonnegative().optional().catch(undefined);
const modelTurnSchema = z.object({
  text: z.string().optional(),
  toolCalls: z.array(z.object({ id: z.string().optional(), name: z.unknown(), arguments: z.unknown() })).default([]),
  done: z.boolean().default(false),
  usage: z
    .object({
      inputTokens: tokenCount,
      outputTokens: tokenCount,
      cachedInputTokens: tokenCount,
      reasoningTokens: tokenCount,
    })
    .optional()
    .catch(undefined),
  modelId: z.string().max(200).optional().catch(undefined),
  finishReason: z
    .enum(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other'])
    .optional()
    .catch(undefined),
  issue: z
    .object({
      code: z.enum(['MODEL_REFUSED', 'MODEL_EMPTY_RESPONSE', 'MODEL_OUTPUT_TRUNCATED']),
      message: z.string().max(2_000),
    })
    .optional(),
});

/** The activities that talk to models. */
export interface ModelActivities {
  callModel(input: CallModelInput): Promise<ModelTurn>;
}

/**
 * Builds the `callModel` activity. It appends the new messages to the run's transcript in the transcript
 * store, calls the provider with the whole transcript and the run's tool catalog, and normalises the
 * answer so the workflow only ever sees a well-formed {@link ModelTurn}: tool names are strings (an
 * invented or missing name is refused later by the workflow's visibility gate), arguments are recorded in
 * one shape whatever the provider (a JSON object when the model sent one, as text or not; anything else
 * stays as sent, for the tool activity's guard to judge: see `recordedToolArguments`), and every call has
 * an id. A turn holding values JSON cannot carry becomes a `MODEL_OUTPUT_NOT_JSON` issue (see
 * `jsonModelTurn`); a turn that is JSON but not a turn fails the model step (`MODEL_OUTPUT_INVALID`).
 *
 * @example
 * ```ts
 * const activities = { ...createModelActivities({ registry, providers: { openai: myOpenAiProvider } }) };
 * ```
 */
export function createModelActivities(deps: ModelActivityDeps): ModelActivities {
  const providers: Record<string, ModelProvider> = { scripted: scriptedModel, ...deps.providers };
  const transcripts = deps.transcripts ?? new MemoryTranscriptStore();
  const withBreaker = { ...deps, breaker: deps.breaker ?? createProviderBreaker({ random: deps.random }) };
  const telemetry: ModelCallTelemetry = {
    metrics: createGenAiClientMetrics(deps.meterProvider),
    ...(deps.tracerProvider ? { tracerProvider: deps.tracerProvider } : {}),
  };
  return {
    async callModel(input: CallModelInput): Promise<ModelTurn> {
      // Names this worker in a heartbeat at once; a retry whose previous worker died resets the sticky queue.
      const forgetting = announceWorker();
      const provider = Object.hasOwn(providers, input.settings.provider)
        ? providers[input.settings.provider]
        : undefined;
      if (!provider) {
        throw engineFailure(
          ENGINE_FAILURE_TYPES.UNKNOWN_MODEL_PROVIDER,
          `No model provider "${input.settings.provider}" is registered on this worker (known: ${Object.keys(providers).join(', ')}).`,
        );
      }
      const written = await transcripts.write(input.runKey, input.fromIndex, input.messages);
      const transcript = written ? await transcripts.read(input.runKey) : undefined;
      if (!transcript) {
        throw engineFailure(
          ENGINE_FAILURE_TYPES.TRANSCRIPT_MISSING,
          `The transcript store has no transcript up to message ${input.fromIndex} for ${input.runKey}.`,
        );
      }
      const request: ModelRequest = {
        goal: input.goal,
        ...(input.instructions !== undefined ? { instructions: input.instructions } : {}),
        ...(input.output !== undefined ? { output: input.output } : {}),
        turn: input.turn,
        transcript,
        tools: modelTools(
          [...modelVisibleTools(deps.registry.catalog(), input.allowedTools), ...(input.extraTools ?? [])],
          input.toolView ?? 'full',
        ),
        settings: input.settings,
      };
      const live = deps.streams
        ? openTurnStream(deps.streams, input.runKey, segmentOf(input), activityLog(), {
            local: currentActivityInfo()?.isLocal === true,
          })
        : undefined;
      try {
        // One GenAI `chat` operation per provider call: a span (when traced) and the GenAI client metrics.
        const answered = await tracedModelCall(telemetry, input.settings, () =>
          answer(input, provider, request, withBreaker, live),
        );
        const turn = withAnswerCheck(answered, input.output);
        await live?.complete(turn);
        await forgetting;
        return turn;
      } catch (error) {
        await live?.fail(failureCodeOf(error));
        throw error;
      }
    },
  };
}

/** Calls the provider for one turn and normalises what it returned (see {@link createModelActivities}). */
async function answer(
  input: CallModelInput,
  provider: ModelProvider,
  request: ModelRequest,
  deps: ModelActivityDeps,
  live: TurnStream | undefined,
): Promise<ModelTurn> {
  const raw = await guardedCall(input, deps, () =>
    callWithDeadline(
      // The provider gets the sink only, never the segment's end.
      (context) =>
        provider(
          request,
          live ? { ...context, stream: { text: live.text, toolCallStart: live.toolCallStart } } : context,
        ),
      turnTimeoutMs(input.settings, deps.turnTimeoutMs),
    ),
  );
  // Values JSON cannot carry (a symbol as a tool name, a BigInt or a function in the arguments, a cycle)
  // make the turn an issue the model reads: the workflow only ever sees JSON, and no such call runs.
  const json = jsonModelTurn(raw);
  if (!json.ok) {
    return {
      toolCalls: [],
      done: false,
      issue: { code: 'MODEL_OUTPUT_NOT_JSON', message: truncateText(notJsonMessage(json.problem), 2_000) },
    };
  }
  const parsed = modelTurnSchema.safeParse(json.turn);
  if (!parsed.success) {
    throw engineFailure(
      ENGINE_FAILURE_TYPES.MODEL_OUTPUT_INVALID,
      truncateText(
        `The model provider "${input.settings.provider}" returned a malformed turn (${z.prettifyError(parsed.error).slice(0, 500)}): ${turnExcerpt(raw)}`,
        PAYLOAD_LIMITS.errorTextChars,
      ),
      // Its own backoff (1 s, 2 s, 4 s…): the retry policy's interval is short, for attempts lost with a worker.
      { retryable: true, nextRetryDelayMs: malformedTurnRetryDelayMs(currentActivityInfo()?.attempt ?? 1) },
    );
  }
  // A turn with neither text nor tool calls (`{}`) is an empty response, never a completed answer.
  const empty = parsed.data.issue === undefined ? emptyTurnProblem(parsed.data) : undefined;
  if (empty) parsed.data.issue = { code: 'MODEL_EMPTY_RESPONSE', message: `The model's turn was empty: ${empty}.` };
  const turn = parsed.data;
  const usage = turn.usage ? withoutUndefined(turn.usage) : undefined;
  // Whatever the model produced, the turn must fit through Temporal (see boundModelTurn).
  return boundModelTurn({
    ...(turn.text !== undefined ? { text: turn.text } : {}),
    toolCalls: turn.toolCalls.map((call, index) => ({
      id: call.id ?? `call_${input.turn + 1}_${index + 1}`,
      name: typeof call.name === 'string' ? call.name : JSON.stringify(call.name ?? null),
      arguments: recordedToolArguments(call.arguments),
    })),
    done: turn.issue === undefined && (turn.done || turn.toolCalls.length === 0),
    ...(usage && Object.keys(usage).length > 0 ? { usage } : {}),
    ...(turn.modelId !== undefined ? { modelId: turn.modelId } : {}),
    ...(turn.finishReason !== undefined ? { finishReason: turn.finishReason } : {}),
    ...(turn.issue !== undefined && turn.toolCalls.length === 0 ? { issue: turn.issue } : {}),
  });
}

/**
 * A final answer of a run with a typed answer, checked against its schema here, on the worker (the workflow
 * cannot run zod): the turn carries the validated value, or the observation the model reads.
 */
function withAnswerCheck(turn: ModelTurn, output: AgentOutputSpec | undefined): ModelTurn {
  if (!output || !turn.done || turn.issue !== undefined) return turn;
  return { ...turn, answerCheck: checkAnswer(output, turn.text) };
}

/**
 * The provider's call behind its breaker (provider-breaker.ts): refused at once while another call probes a
 * provider that is down; its outcome tells the breaker whether the provider answered. The scripted model plays
 * each run's own script: it is no shared downstream, and has no breaker.
 */
async function guardedCall<T>(
  input: CallModelInput,
  deps: Pick<ModelActivityDeps, 'breaker' | 'random' | 'probeSlots'>,
  call: () => Promise<T>,
): Promise<T> {
  const { provider } = input.settings;
  const breaker = provider === 'scripted' ? undefined : deps.breaker;
  const key = providerBreakerKey(input.settings);
  const admission = breaker?.admit(key, Date.now());
  if (admission && !admission.admitted) throw breakerRefusal(provider, admission);
  // A probe also takes the probe slot the workers of the store share (shared-probe-slot.ts).
  const slot =
    breaker && admission?.probe && deps.probeSlots
      ? await sharedProbeSlot(deps.probeSlots.store, key, deps.probeSlots.owner, breaker.probeIntervalMs(key))
      : undefined;
  if (breaker && admission?.probe && slot && !slot.taken) {
    breaker.released(key);
    throw breakerRefusal(provider, { ...admission, retryAfterMs: slot.retryAfterMs });
  }
  try {
    const value = await call();
    breaker?.succeeded(key);
    if (slot?.taken) await slot.answered();
    return value;
  } catch (error) {
    const failure = modelFailure(error, provider, deps.random);
    const outage = failure instanceof ApplicationFailure && isModelOutageType(failure.type);
    if (breaker) tellBreaker(breaker, key, failure);
    if (slot?.taken && !outage) await slot.answered();
    throw failure;
  }
}

/**
 * What a failed call tells the breaker: an outage counts against the provider; any other answer of the
 * provider (a 401, a 400) shows it is up; a timeout or a cancellation tells nothing, and frees the probe.
 */
function tellBreaker(breaker: ProviderBreaker, key: string, failure: unknown): void {
  const type = failure instanceof ApplicationFailure ? failure.type : undefined;
  if (!(failure instanceof ApplicationFailure) || type === undefined || type === null) {
    breaker.released(key);
  } else if (isModelOutageType(type)) {
    const details = failure.details?.[0] as { retryAfterMs?: number; said?: string } | undefined;
    breaker.failed(key, Date.now(), {
      code: type,
      message: details?.said ?? failure.message,
      ...(details?.retryAfterMs !== undefined ? { retryAfterMs: details.retryAfterMs } : {}),
    });
  } else if (type === ENGINE_FAILURE_TYPES.MODEL_TIMEOUT) breaker.released(key);
  else breaker.succeeded(key);
}

/** The segment this attempt writes: the activity's run and attempt (a direct call outside an activity: attempt 1). */
function segmentOf(input: CallModelInput): StreamSegment {
  const info = currentActivityInfo();
  const workflowId = info?.workflowExecution?.workflowId ?? input.runKey.split('/')[0] ?? input.runKey;
  return { workflowId, runId: info?.workflowExecution?.runId ?? '', turn: input.turn, attempt: info?.attempt ?? 1 };
}

/** The wait before asking again after a malformed turn: 1 s doubled per attempt, at most 30 s. */
function malformedTurnRetryDelayMs(attempt: number): number {
  return Math.min(MODEL_RETRY.maxDelayMs, MODEL_RETRY.initialDelayMs * 2 ** Math.max(0, attempt - 1));
}

function currentActivityInfo(): Context['info'] | undefined {
  try {
    return Context.current().info;
  } catch {
    return undefined;
  }
}

function activityLog(): Context['log'] | undefined {
  try {
    return Context.current().log;
  } catch {
    return undefined;
  }
}

/** The code a failed attempt's segment ends with: the ApplicationFailure's type, or the error's name. */
function failureCodeOf(error: unknown): string {
  if (error instanceof ApplicationFailure && error.type) return error.type;
  return error instanceof Error ? error.name : 'ERROR';
}

/** The tools the model sees, plus the built-in `fetch_tool_result` when a visible tool is fetch-later. */
function modelTools(visible: ToolCatalogEntry[], view: 'full' | 'summary'): ToolCatalogEntry[] {
  return withFetchToolResult(visible, modelFacingCatalog(visible, view));
}

/** The deadline of one turn: the run's `turnTimeoutMs` setting, the worker's default, or 90 s. */
function turnTimeoutMs(settings: ModelSettings, workerDefault: number | undefined): number {
  const fromSettings = settings.turnTimeoutMs;
  if (typeof fromSettings === 'number' && Number.isFinite(fromSettings) && fromSettings > 0) return fromSettings;
  return workerDefault ?? MODEL_CALL_LIMITS.turnTimeoutMs;
}

function withoutUndefined<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
