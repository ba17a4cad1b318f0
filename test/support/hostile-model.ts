import { isStoredOutputReference } from '../../src/contract/claim-check-reference';
import type { ModelProvider, ModelRequest, ModelTurn } from '../../src/contract/model-types';

/**
 * How the hostile model builds a call's arguments on the worker, so that the run's own input stays small:
 * - `json`: these arguments as they are;
 * - `bigString`: `{ [field]: <bytes × "x">, ...rest }`;
 * - `deepNesting`: `{ [field]: [[[…]]] }` nested `levels` deep, as a JSON string;
 * - `text`: this exact string (broken JSON, lone surrogates…);
 * - `firstStoredOutput`: `{ handle, offset }` of the first stored output in the transcript.
 */
export type HostileArguments =
  | { json: unknown }
  | { bigString: { field: string; bytes: number; rest?: Record<string, unknown> } }
  | { deepNesting: { field: string; levels: number; rest?: Record<string, unknown> } }
  | { text: string }
  | { firstStoredOutput: { offset: number } };

/** One turn: tool calls (each possibly repeated), a final answer, or a raw (malformed) turn. */
export type HostileTurn =
  | { calls: Array<{ name: string; args: HostileArguments; repeat?: number }> }
  | { final: string }
  | { finalOfBytes: number }
  | { raw: unknown };

/** Settings of the `hostile` provider: `{ provider: 'hostile', turns }`. */
export interface HostileModelSettings {
  provider: 'hostile';
  turns: HostileTurn[];
  [setting: string]: unknown;
}

/**
 * A model that misbehaves on purpose, deterministically: turn N plays `turns[N]`, building large or broken
 * arguments on the worker from a compact description. After the last turn it finishes.
 */
export const hostileModel: ModelProvider = async (request: ModelRequest): Promise<ModelTurn> => {
  const turns = (request.settings.turns ?? []) as HostileTurn[];
  const turn = turns[request.turn];
  if (!turn) return { text: 'done', toolCalls: [], done: true };
  if ('raw' in turn) return turn.raw as ModelTurn;
  if ('final' in turn) return { text: turn.final, toolCalls: [], done: true };
  if ('finalOfBytes' in turn) return { text: 'a'.repeat(turn.finalOfBytes), toolCalls: [], done: true };
  const toolCalls = turn.calls.flatMap((call, c) =>
    Array.from({ length: call.repeat ?? 1 }, (_, r) => ({
      id: `call_${request.turn + 1}_${c + 1}_${r + 1}`,
      name: call.name,
      arguments: build(call.args, request),
    })),
  );
  return { toolCalls, done: false };
};

function build(spec: HostileArguments, request: ModelRequest): unknown {
  if ('json' in spec) return spec.json;
  if ('text' in spec) return spec.text;
  if ('bigString' in spec) {
    const { field, bytes, rest } = spec.bigString;
    return { ...rest, [field]: 'x'.repeat(bytes) };
  }
  if ('deepNesting' in spec) {
    const { field, levels, rest } = spec.deepNesting;
    const restJson = rest ? JSON.stringify(rest).slice(1, -1) : '';
    return `{${restJson}${restJson ? ',' : ''}${JSON.stringify(field)}:${'['.repeat(levels)}${']'.repeat(levels)}}`;
  }
  for (const message of request.transcript) {
    if (message.role === 'tool' && message.observation.status === 'ok') {
      if (isStoredOutputReference(message.observation.output)) {
        return { handle: message.observation.output.handle, offset: spec.firstStoredOutput.offset };
      }
    }
  }
  return { handle: 'none-found', offset: 0 };
}
