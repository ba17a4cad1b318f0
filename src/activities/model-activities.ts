import { Context } from '@temporalio/activity';
import { z } from 'zod';
import type { ModelProvider, ModelSettings, ModelTurn, TranscriptMessage } from '../model/model-types';
import { scriptedModel } from '../model/scripted-model';
import type { ToolRegistry } from '../tools/tool-registry';
import { MemoryTranscriptStore } from '../transcripts/memory-transcript-store';
import type { TranscriptStore } from '../transcripts/transcript-store';
import { MODEL_CALL_HEARTBEAT } from '../model/model-call-heartbeat';
import { ENGINE_FAILURE_TYPES, engineFailure } from '../protocol/activity-protocol';
import { modelVisibleTools } from '../tools/tool-visibility';

/** Dependencies of {@link createModelActivities}. */
export interface ModelActivityDeps {
  /** The tools of this worker: the model is shown the catalog of the run's allowed tools. */
  registry: ToolRegistry;
  /** Model providers by name; `scripted` is always available. */
  providers?: Record<string, ModelProvider>;
  /** Where run transcripts live (default: in this process's memory). */
  transcripts?: TranscriptStore;
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
  /** Tool names the model may see; all tools of the worker when omitted. */
  allowedTools?: readonly string[];
  /** Model turns taken before this one, over the whole run. */
  turn: number;
  /** Position of `messages[0]` in the transcript. */
  fromIndex: number;
  /** New transcript messages (or the whole transcript, with `fromIndex` 0). */
  messages: TranscriptMessage[];
}

const modelTurnSchema = z.object({
  text: z.string().optional(),
  toolCalls: z.array(z.object({ id: z.string().optional(), name: z.unknown(), arguments: z.unknown() })).default([]),
  done: z.boolean().default(false),
});

/** The activities that talk to models. */
export interface ModelActivities {
  callModel(input: CallModelInput): Promise<ModelTurn>;
}

/**
 * Builds the `callModel` activity. It appends the new messages to the run's transcript in the transcript
 * store, calls the provider with the whole transcript and the run's tool catalog, and normalises the
 * answer so the workflow only ever sees a well-formed {@link ModelTurn}: tool names are strings (an
 * invented or missing name is refused later by the workflow's visibility gate), arguments stay raw (the
 * tool activity judges them), and every call has an id.
 *
 * @example
 * ```ts
 * const activities = { ...createModelActivities({ registry, providers: { openai: myOpenAiProvider } }) };
 * ```
 */
export function createModelActivities(deps: ModelActivityDeps): ModelActivities {
  const providers: Record<string, ModelProvider> = { scripted: scriptedModel, ...deps.providers };
  const transcripts = deps.transcripts ?? new MemoryTranscriptStore();
  return {
    async callModel(input: CallModelInput): Promise<ModelTurn> {
      const provider = providers[input.settings.provider];
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
      const raw = await heartbeatWhile(
        provider({
          goal: input.goal,
          turn: input.turn,
          transcript,
          tools: modelVisibleTools(deps.registry.catalog(), input.allowedTools),
          settings: input.settings,
        }),
      );
      const parsed = modelTurnSchema.safeParse(raw);
      if (!parsed.success) {
        throw engineFailure(
          ENGINE_FAILURE_TYPES.MODEL_OUTPUT_INVALID,
          `The model provider "${input.settings.provider}" returned a malformed turn: ${z.prettifyError(parsed.error)}`,
          { retryable: true },
        );
      }
      const turn = parsed.data;
      return {
        ...(turn.text !== undefined ? { text: turn.text } : {}),
        toolCalls: turn.toolCalls.map((call, index) => ({
          id: call.id ?? `call_${input.turn + 1}_${index + 1}`,
          name: typeof call.name === 'string' ? call.name : JSON.stringify(call.name ?? null),
          arguments: call.arguments,
        })),
        done: turn.done || turn.toolCalls.length === 0,
      };
    },
  };
}

/**
 * Heartbeats Temporal while `work` runs (when called inside an activity), so a model call on a worker
 * that died is noticed after the heartbeat timeout instead of the whole start-to-close timeout.
 */
async function heartbeatWhile<T>(work: Promise<T>): Promise<T> {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return work; // not inside an activity (direct calls in tests)
  }
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), MODEL_CALL_HEARTBEAT.everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
