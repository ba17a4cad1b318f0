import type { ModelRequest, ModelSettings, ModelTurn } from '../contract/model-types';

/**
 * One turn of a scripted model: the tool calls it makes, or its final answer. With `ifPreviousFailed`,
 * the model takes that turn instead when any observation of the previous turn was an error — enough to
 * show a model correcting itself, offline and deterministically. In a JSON file (`run --script`):
 *
 * ```json
 * [
 *   { "text": "Searching.", "toolCalls": [{ "name": "search_flights", "arguments": { "from": "LIS", "to": "BER" } }] },
 *   { "text": "Found FR2381.", "final": true }
 * ]
 * ```
 *
 * `parseScriptedTurns` checks a script against this format (see docs/scripted-model.md).
 */
export interface ScriptedTurn {
  /** What the model says this turn (the answer, when the turn is final or has no tool calls). */
  text?: string;
  /**
   * The calls the model makes this turn, run in order (or at once with `parallelToolCalls`). `arguments` is
   * what a model would send: a JSON object, or JSON text (which may be broken on purpose, to show the guard).
   */
  toolCalls?: ReadonlyArray<{ name: string; arguments?: unknown }>;
  /** Ends the run with `text` as the answer (its tool calls, if any, are not made). */
  final?: boolean;
  /** The turn played instead when any observation of the previous turn was an error. */
  ifPreviousFailed?: ScriptedTurn;
}

/** Settings of the scripted provider: `{ provider: 'scripted', script: [...] }`. */
export interface ScriptedModelSettings extends ModelSettings {
  provider: 'scripted';
  script: ScriptedTurn[];
  /**
   * Play the script this many times before finishing (default 1): a long run from a short script, with
   * constant-size settings. A `final` turn ends the run whenever it is played.
   */
  repeat?: number;
  /** The final answer after the last round (default: the text of the last turn played). */
  finalText?: string;
}

/**
 * A deterministic model that plays a script: turn N of the run plays `script[N]`. When the script is
 * exhausted it finishes with the text of its last turn. Runs offline; used by the demo and the tests.
 *
 * @example
 * ```ts
 * const settings: ScriptedModelSettings = {
 *   provider: 'scripted',
 *   script: [
 *     { toolCalls: [{ name: 'search_flights', arguments: '{"from":"LIS","to":"BER"}' }] },
 *     { text: 'Booked.', final: true },
 *   ],
 * };
 * ```
 */
export const scriptedModel = async (request: ModelRequest): Promise<ModelTurn> => {
  const script = Array.isArray(request.settings.script) ? (request.settings.script as ScriptedTurn[]) : [];
  const repeat = typeof request.settings.repeat === 'number' ? Math.max(1, Math.floor(request.settings.repeat)) : 1;
  const assistantTurns = request.turn;
  const round = script.length > 0 ? Math.floor(assistantTurns / script.length) : 0;
  let turn = round < repeat ? script[assistantTurns % script.length] : undefined;
  const finalText = typeof request.settings.finalText === 'string' ? request.settings.finalText : undefined;
  if (!turn) return { text: finalText ?? 'The script has no more turns.', toolCalls: [], done: true };
  if (turn.ifPreviousFailed && previousTurnFailed(request)) turn = turn.ifPreviousFailed;
  const toolCalls = (turn.toolCalls ?? []).map((call, index) => ({
    id: `call_${assistantTurns + 1}_${index + 1}`,
    name: call.name,
    arguments: call.arguments,
  }));
  return {
    ...(turn.text !== undefined ? { text: turn.text } : {}),
    toolCalls: turn.final ? [] : toolCalls,
    done: turn.final === true || toolCalls.length === 0,
  };
};

function previousTurnFailed(request: ModelRequest): boolean {
  const messages = request.transcript;
  let i = messages.length - 1;
  let failed = false;
  while (i >= 0 && messages[i]?.role === 'tool') {
    const message = messages[i];
    if (message?.role === 'tool' && message.observation.status === 'error') failed = true;
    i -= 1;
  }
  return failed;
}
