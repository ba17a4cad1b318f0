/**
 * The format of a scripted model's turns (`{ provider: 'scripted', script }`, `durable-tools run --script
 * turns.json`): a zod schema, and the check that explains a bad script by the path of each problem.
 */
import { z } from 'zod';
import type { ScriptedTurn } from './scripted-model';
import { DurableToolsError } from '../contract/durable-tools-error';

/** Problems listed one by one in a {@link ScriptedTurnsError}; the rest are counted. */
const MAX_LISTED_PROBLEMS = 10;

const TURN_FIELDS = 'text, toolCalls, final, ifPreviousFailed';
const CALL_FIELDS = 'name, arguments';

const unknownField = (fields: string) => (issue: z.core.$ZodRawIssue) =>
  issue.code === 'unrecognized_keys' ? `unknown field (expected only ${fields})` : 'expected an object';

/** One tool call of a scripted turn: the tool's name and its arguments (any JSON: an object, or JSON text). */
const scriptedToolCallSchema = z.strictObject(
  {
    name: z.string({ error: 'expected a string (the name of a tool)' }).min(1, { error: 'expected a tool name' }),
    arguments: z.unknown().optional(),
  },
  { error: unknownField(CALL_FIELDS) },
);

/**
 * One turn of a scripted model: `text`, `toolCalls` (`[{ name, arguments }]`), `final` (ends the run with
 * `text` as the answer) and `ifPreviousFailed` (the turn played instead when an observation of the previous
 * turn was an error). Every field is optional; no other field is allowed (a typo such as `toolcalls` would
 * otherwise be ignored silently).
 */
export const scriptedTurnSchema: z.ZodType<ScriptedTurn> = z.strictObject(
  {
    text: z.string({ error: 'expected a string' }).optional(),
    toolCalls: z.array(scriptedToolCallSchema, { error: 'expected an array of {"name", "arguments"}' }).optional(),
    final: z.boolean({ error: 'expected true or false' }).optional(),
    get ifPreviousFailed() {
      return scriptedTurnSchema.optional();
    },
  },
  { error: unknownField(TURN_FIELDS) },
);

/** A whole script: the turns in the order the model plays them. */
export const scriptedTurnsSchema = z.array(scriptedTurnSchema, { error: 'expected a JSON array of turns' });

/** One problem of a script: where (`turns[2].toolCalls[0].name`) and what. */
export interface ScriptedTurnsProblem {
  path: string;
  message: string;
}

/** A script that does not have the scripted turn format; `message` lists the problems by path. */
export class ScriptedTurnsError extends DurableToolsError<'INVALID_SCRIPT'> {
  override readonly name = 'ScriptedTurnsError';
  constructor(
    message: string,
    /** Every problem found, by path. */
    readonly problems: ScriptedTurnsProblem[],
  ) {
    super(message, 'INVALID_SCRIPT');
  }
}

/**
 * Checks a script against the scripted turn format and returns it typed, or throws a
 * {@link ScriptedTurnsError} naming each problem by its path, e.g. `turns[2].toolCalls[0].name: expected a
 * string (the name of a tool)`. `root` names the array in those paths (default `turns`).
 *
 * The scripted model itself plays whatever it is given (tests feed it hostile turns on purpose); check a
 * script a person wrote with this first. `durable-tools run --script` does.
 *
 * @example
 * ```ts
 * const script = parseScriptedTurns(JSON.parse(readFileSync('turns.json', 'utf8')));
 * await startAgentRun(client, { goal: 'Book a trip', model: { provider: 'scripted', script } });
 * ```
 */
export function parseScriptedTurns(value: unknown, root = 'turns'): ScriptedTurn[] {
  const parsed = scriptedTurnsSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => problemOf(issue, root));
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => `${p.path}: ${p.message}`);
  const more = problems.length > listed.length ? [`(and ${problems.length - listed.length} more)`] : [];
  throw new ScriptedTurnsError(
    `The script does not have the scripted turn format:\n  ${[...listed, ...more].join('\n  ')}`,
    problems,
  );
}

function problemOf(issue: z.core.$ZodIssue, root: string): ScriptedTurnsProblem {
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
  const paths = keys.map((key) => pathText(root, key === undefined ? issue.path : [...issue.path, key]));
  return { path: paths.join(', '), message: issue.message };
}

/** `turns[2].toolCalls[0].name`; a key that is not an identifier in brackets and quotes. */
function pathText(root: string, path: ReadonlyArray<PropertyKey>): string {
  let text = root;
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) text += `.${key}`;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text;
}
