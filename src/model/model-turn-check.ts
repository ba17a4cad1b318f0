import {
  ARGUMENT_GUARD_LIMITS,
  nestsDeeperThan,
  plainJsonCopy,
  stringifyWithoutRecursion,
} from '../guard/json-arguments';

/** Characters of a malformed model turn quoted in the error that ends the model step. */
export const TURN_EXCERPT_CHARS = 300;

/**
 * What is wrong with a turn that parsed, if anything: a turn with neither text nor a tool call (`{}`)
 * says nothing, and must not end a run as `completed`.
 */
export function emptyTurnProblem(turn: {
  text?: string | undefined;
  toolCalls: readonly unknown[];
}): string | undefined {
  if (turn.toolCalls.length > 0) return undefined;
  if (typeof turn.text === 'string' && turn.text.trim() !== '') return undefined;
  return 'the turn has neither text nor tool calls';
}

/** The start of a turn as JSON, for an error message (never throws, whatever the provider returned). */
export function turnExcerpt(raw: unknown): string {
  let text: string;
  try {
    text = raw === undefined ? 'undefined' : stringifyWithoutRecursion(raw);
  } catch {
    text = String(raw);
  }
  return text.length > TURN_EXCERPT_CHARS ? `${text.slice(0, TURN_EXCERPT_CHARS)}…` : text;
}

/**
 * The arguments of a model's tool call as they may cross the wire: objects nested deeper than the argument
 * guard accepts are sent as JSON text (Temporal's serializer would overflow the stack on them), so the tool
 * activity refuses them with `INVALID_ARGUMENTS` instead of the model step failing.
 */
export function wireSafeArguments(args: unknown): unknown {
  if (args === null || typeof args !== 'object') return args;
  return nestsDeeperThan(args, ARGUMENT_GUARD_LIMITS.maxDepth) ? stringifyWithoutRecursion(args) : args;
}

/**
 * The arguments of a model's tool call in the one shape runs record them, whatever the provider: a JSON
 * object. AI SDK providers hand over the model's raw text (`'{"city":"Berlin"}'`), scripts and custom
 * providers usually an object; text that parses to a plain JSON object the argument guard accepts becomes
 * that object. Anything else stays as it came (text that is not JSON, an array, a lone surrogate, a
 * `__proto__` key, nesting past the guard's depth), so the guard judges exactly what the model sent and its
 * `INVALID_ARGUMENTS` says what was wrong.
 */
export function recordedToolArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return wireSafeArguments(raw);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return raw;
  const copy = plainJsonCopy(parsed, ARGUMENT_GUARD_LIMITS.maxDepth);
  return copy.ok && copy.forbiddenKeyPaths.length === 0 ? parsed : raw;
}
