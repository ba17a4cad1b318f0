import type { z } from 'zod';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../contract/activity-protocol';
import { findInventedFields, type InventedField } from './invented-fields';
import {
  ARGUMENT_GUARD_LIMITS,
  FORBIDDEN_ARGUMENT_KEY,
  plainJsonCopy,
  restoreObjectPrototypes,
  type ArgumentGuardLimits,
} from './json-arguments';

/**
 * The outcome of checking a model's arguments against a tool's input schema. `value` is what zod produced
 * (defaults filled in), for the tool; `sent` is what the model sent, parsed, for the fingerprint.
 */
export type ParsedToolArguments<T> = { ok: true; value: T; sent: unknown } | { ok: false; error: ToolErrorObservation };

type Issue = { path: string; message: string };

/** A key to remove: invented (no schema declares it there) or forbidden (`__proto__`, wherever it is). */
type KeyProblem = InventedField & { forbidden?: true };

/**
 * Checks a model's raw tool arguments against the tool's input schema and explains the problems in
 * words the model can act on. Catches the classic faults of model output:
 * - a string that is not JSON (or JSON that is not an object),
 * - JSON the engine could not store or fingerprint (lone surrogates, nesting past
 *   {@link ARGUMENT_GUARD_LIMITS.maxDepth}),
 * - type drift (`"10"` for `10`),
 * - an enum value that does not exist,
 * - invented fields, in objects, arrays, records, unions, discriminated unions and intersections
 *   (rejected even where the schema would silently strip them); `constructor` is a field name like any
 *   other;
 * - a `__proto__` key anywhere (in a record, a loose object, an `unknown` value): forbidden, since
 *   assigning it replaces an object's prototype (zod would silently drop it from a record).
 *
 * Every object the tool receives is an ordinary object (`Object.prototype`, own data properties), as
 * `JSON.parse` makes them, whatever its keys and wherever it sits (under `z.any()`, `z.unknown()`, a loose
 * object, a record or an array).
 *
 * Nothing is coerced: a call either matches the contract exactly or never reaches the implementation.
 * The cost is linear in the size of the input, nothing recurses deeper than the bounded nesting, and at
 * most `limits.maxIssues` problems are listed (the rest are counted). `limits` default to
 * {@link ARGUMENT_GUARD_LIMITS}; a worker or a tool may set others (`argumentGuard`).
 *
 * @example
 * ```ts
 * const parsed = parseToolArguments(schema, '{"nights":"3"}');
 * if (!parsed.ok) return parsed.error; // { code: 'INVALID_ARGUMENTS', hint: '`nights` must be a number ...' }
 * ```
 */
export function parseToolArguments<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  limits: ArgumentGuardLimits = ARGUMENT_GUARD_LIMITS,
): ParsedToolArguments<z.output<S>> {
  const clip = (text: string) => clipTo(text, limits.maxIssueChars);
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (cause) {
      return fail(
        `The arguments are not valid JSON: ${clip((cause as Error).message)}.`,
        'Send the arguments as one JSON object, e.g. {"field": "value"}, with double-quoted keys and no trailing commas or comments.',
        [],
      );
    }
  }
  if (value === undefined || value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return fail(
      `The arguments must be a JSON object, not ${describeType(value)}.`,
      'Send the arguments as one JSON object whose keys are the parameter names.',
      [],
    );
  }
  const copy = plainJsonCopy(value, limits.maxDepth);
  if (!copy.ok) {
    const { path, message, hint } = copy.problem;
    return fail(`The arguments cannot be accepted: \`${clip(path)}\`: ${message}.`, hint, [
      { path: clip(path), message },
    ]);
  }
  const sent = copy.value;

  const keys = keyProblems(findInventedFields(schema, sent), copy.forbiddenKeyPaths);
  const result = schema.safeParse(sent);
  if (result.success && keys.length === 0) {
    // Objects zod passed through (z.any(), z.unknown(), loose objects, records) are the copy's own: make them
    // ordinary objects again, as `JSON.parse` would have made them.
    restoreObjectPrototypes(sent);
    return { ok: true, value: result.data, sent };
  }
  const zodIssues = result.success ? [] : result.error.issues;
  const total = countKeyIssues(keys) + zodIssues.length;
  const issues = [
    ...describeKeyProblems(keys, limits.maxIssues),
    ...zodIssues.slice(0, limits.maxIssues).map((issue) => explainIssue(issue, sent)),
  ]
    .slice(0, limits.maxIssues)
    .map((issue) => ({ path: clip(issue.path), message: clip(issue.message) }));
  const rest = total - issues.length;
  const more = rest > 0 ? ` (and ${rest} more problem${rest === 1 ? '' : 's'} not listed)` : '';
  return fail(
    `The arguments do not match the tool's input schema (${total} problem${total === 1 ? '' : 's'}).`,
    `Fix and call again: ${issues.map((i) => i.message).join('; ')}${more}.`,
    issues,
  );
}

function fail(message: string, hint: string, issues: Issue[]): { ok: false; error: ToolErrorObservation } {
  return {
    ok: false,
    error: {
      status: 'error',
      code: TOOL_ERROR_CODES.INVALID_ARGUMENTS,
      message,
      hint,
      retryable: false,
      attempts: 0,
      issues,
    },
  };
}

function clipTo(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

/**
 * The invented keys, then every `__proto__` key not already reported as invented: a record or a loose
 * object would accept it, and zod would silently drop it (or a tool's `Object.assign` swap a prototype).
 */
function keyProblems(
  invented: readonly InventedField[],
  forbiddenKeyPaths: ReadonlyArray<ReadonlyArray<string | number>>,
): KeyProblem[] {
  const reported = new Set(invented.filter((f) => f.key === FORBIDDEN_ARGUMENT_KEY).map((f) => formatPath(f.path)));
  const forbidden = forbiddenKeyPaths
    .filter((path) => !reported.has(formatPath(path)))
    .map((path): KeyProblem => ({ path, key: FORBIDDEN_ARGUMENT_KEY, allowed: [], forbidden: true }));
  return [...invented, ...forbidden];
}

/** One issue per object holding invented keys, and one per forbidden key. */
function countKeyIssues(keys: readonly KeyProblem[]): number {
  return new Set(keys.map((field) => `${field.forbidden ? '!' : ''}${formatPath(field.path)}`)).size;
}

/** Groups invented keys by the object holding them, in order, up to `max` objects; forbidden keys apart. */
function describeKeyProblems(keys: readonly KeyProblem[], max: number): Issue[] {
  const byPath = new Map<string, { where: string; keys: string[]; allowed: readonly string[]; forbidden: boolean }>();
  for (const field of keys) {
    const where = formatPath(field.path);
    const id = `${field.forbidden ? '!' : ''}${where}`;
    const entry = byPath.get(id);
    if (entry) entry.keys.push(field.key);
    else if (byPath.size < max) {
      byPath.set(id, { where, keys: [field.key], allowed: field.allowed, forbidden: field.forbidden === true });
    }
  }
  return [...byPath.values()].map((entry) =>
    entry.forbidden ? forbiddenKeyIssue(entry.where) : inventedKeysIssue(entry.where, entry.keys, entry.allowed),
  );
}

function forbiddenKeyIssue(where: string): Issue {
  const place = where === '(root)' ? '' : ` in \`${where}\``;
  return {
    path: where,
    message: `remove the forbidden field \`${FORBIDDEN_ARGUMENT_KEY}\`${place} (a key that would replace an object's prototype is never accepted)`,
  };
}

function inventedKeysIssue(where: string, keys: readonly string[], allowed: readonly string[]): Issue {
  return {
    path: where,
    message: `remove the unknown field${keys.length === 1 ? '' : 's'} ${keys
      .slice(0, 10)
      .map((k) => `\`${k}\``)
      .join(
        ', ',
      )}${keys.length > 10 ? ` and ${keys.length - 10} more` : ''}${where === '(root)' ? '' : ` in \`${where}\``} (allowed: ${allowed.slice(0, 20).join(', ') || 'none'}${allowed.length > 20 ? ', …' : ''})`,
  };
}

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return '(root)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.hasOwn(current, key)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

function explainIssue(issue: z.core.$ZodIssue, root: unknown): Issue {
  const path = formatPath(issue.path);
  const field = `\`${path}\``;
  const received = valueAt(root, issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      if (received === undefined) return { path, message: `${field} is required (${issue.expected})` };
      const drift =
        typeof received === 'string' &&
        ((issue.expected === 'number' && received.trim() !== '' && !Number.isNaN(Number(received))) ||
          (issue.expected === 'boolean' && (received === 'true' || received === 'false')));
      return {
        path,
        message: drift
          ? `${field} must be a ${issue.expected}, not a string: write ${received} without quotes`
          : `${field} must be ${article(issue.expected)}, not ${describeType(received)}`,
      };
    }
    case 'invalid_value':
      return {
        path,
        message: `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}; got ${JSON.stringify(received)}`,
      };
    case 'unrecognized_keys':
      return {
        path,
        message: `remove the unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((k) => `\`${k}\``).join(', ')}${path === '(root)' ? '' : ` in ${field}`}`,
      };
    default:
      return { path, message: `${field}: ${issue.message}` };
  }
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? `an ${noun}` : `a ${noun}`;
}
