import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { ModelProvider, ModelRequest, ModelTurn } from '../model/model-types';
import { scriptedModel } from '../model/scripted-model';

/** Dependencies of {@link createModelActivities}. */
export interface ModelActivityDeps {
  /** Model providers by name; `scripted` is always available. */
  providers?: Record<string, ModelProvider>;
}

/** Failure types the model activity raises. */
export const MODEL_FAILURE_TYPES = {
  unknownProvider: 'UNKNOWN_MODEL_PROVIDER',
  invalidOutput: 'MODEL_OUTPUT_INVALID',
} as const;

const modelTurnSchema = z.object({
  text: z.string().optional(),
  toolCalls: z
    .array(
      z.object({
        id: z.string().optional(),
        name: z.unknown(),
        arguments: z.unknown(),
      }),
    )
    .default([]),
  done: z.boolean().default(false),
});

/** The activities that talk to models. */
export interface ModelActivities {
  callModel(request: ModelRequest): Promise<ModelTurn>;
}

/**
 * Builds the `callModel` activity. The provider's answer is normalised here, on the worker, so that the
 * workflow only ever sees a well-formed {@link ModelTurn}: tool names are strings (an invented or missing
 * name is refused later by the workflow's visibility gate), arguments stay raw (the tool activity judges
 * them), and every call has an id.
 *
 * @example
 * ```ts
 * const activities = { ...createModelActivities({ providers: { openai: myOpenAiProvider } }) };
 * ```
 */
export function createModelActivities(deps: ModelActivityDeps = {}): ModelActivities {
  const providers: Record<string, ModelProvider> = { scripted: scriptedModel, ...deps.providers };
  return {
    async callModel(request: ModelRequest): Promise<ModelTurn> {
      const provider = providers[request.settings.provider];
      if (!provider) {
        throw ApplicationFailure.create({
          type: MODEL_FAILURE_TYPES.unknownProvider,
          nonRetryable: true,
          message: `No model provider "${request.settings.provider}" is registered on this worker (known: ${Object.keys(providers).join(', ')}).`,
        });
      }
      const raw = await provider(request);
      const parsed = modelTurnSchema.safeParse(raw);
      if (!parsed.success) {
        throw ApplicationFailure.create({
          type: MODEL_FAILURE_TYPES.invalidOutput,
          nonRetryable: false,
          message: `The model provider "${request.settings.provider}" returned a malformed turn: ${z.prettifyError(parsed.error)}`,
        });
      }
      const turn = parsed.data;
      return {
        ...(turn.text !== undefined ? { text: turn.text } : {}),
        toolCalls: turn.toolCalls.map((call, index) => ({
          id: call.id ?? `call_${request.transcript.length + 1}_${index + 1}`,
          name: typeof call.name === 'string' ? call.name : JSON.stringify(call.name ?? null),
          arguments: call.arguments,
        })),
        done: turn.done || turn.toolCalls.length === 0,
      };
    },
  };
}
