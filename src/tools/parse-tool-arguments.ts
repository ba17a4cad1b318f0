import type { z } from 'zod';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../protocol/activity-protocol';
import { findInventedFields, type InventedField } from './invented-fields';
import { ARGUMENT_GUARD_LIMITS, plainJsonCopy } from './json-arguments';

/**
 * The outcome of checking a model's arguments against a tool's input schema. `value` is what zod produced
 * (defaults filled in), for the tool; `sent` is what the model sent, parsed, for the fingerprint.
 */
export type ParsedToolArguments<T> = { ok: true; value: T; sent: unknown } | { ok: false; error: ToolErrorObservation };

type Issue = { path: string; message: string };

/**
 * Checks a model's raw tool arguments against the tool's input schema and explains the problems in
 * words the model can act on. Catches the classic faults of model output:
 * - a string that is not JSON (or JSON that is not an object),
 * - JSON the engine could not store or fingerprint (lone surrogates, nesting past
 *   {@link ARGUMENT_GUARD_LIMITS.maxDepth}),
 * - type drift (`"10"` for `10`),
 * - an enum value that does not exist,
 * - invented fields, in objects, arrays, records, unions, discriminated unions and intersections
 *   (rejected even where the schema would silently strip them); `constructor` or `__proto__` are field
 *   names like any other.
 *
 * Nothing is coerced: a call either matches the contract exactly or never reaches the implementation.
 * The cost is linear in the size of the input, nothing recurses deeper than the bounded nesting, and at
 * most {@link ARGUMENT_GUARD_LIMITS.maxIssues} problems are listed (the rest are counted).
 *
 * @example
 * ```ts
 * const parsed = parseToolArguments(schema, '{"nights":"3"}');
 * if (!parsed.ok) return parsed.error; // { code: 'INVALID_ARGUMENTS', hint: '`nights` must be a number ...' }
 * ```
 */
export function parseToolArguments<S extends z.ZodType>(schema: S, raw: unknown): ParsedToolArguments<z.output<S>> {
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
  const copy = plainJsonCopy(value);
  if (!copy.ok) {
    const { path, message, hint } = copy.problem;
    return fail(`The arguments cannot be accepted: \`${clip(path)}\`: ${message}.`, hint, [
      { path: clip(path), message },
    ]);
  }
  const sent = copy.value;

  const invented = findInventedFields(schema, sent);
  const result = schema.safeParse(sent);
  if (result.success && invented.length === 0) return { ok: true, value: result.data, sent };
  const zodIssues = result.success ? [] : result.error.issues;
  const total = countInventedIssues(invented) + zodIssues.length;
  const issues = [
    ...describeInventedFields(invented, ARGUMENT_GUARD_LIMITS.maxIssues),
    ...zodIssues.slice(0, ARGUMENT_GUARD_LIMITS.maxIssues).map((issue) => explainIssue(issue, sent)),
  ]
    .slice(0, ARGUMENT_GUARD_LIMITS.maxIssues)
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

function clip(text: string): string {
  const max = ARGUMENT_GUARD_LIMITS.maxIssueChars;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One issue per object holding invented keys. */
function countInventedIssues(invented: readonly InventedField[]): number {
  return new Set(invented.map((field) => formatPath(field.path))).size;
}

/** Groups invented keys by the object holding them, in order, up to `max` objects. */
function describeInventedFields(invented: readonly InventedField[], max: number): Issue[] {
  const byPath = new Map<string, { keys: string[]; allowed: readonly string[] }>();
  for (const field of invented) {
    const where = formatPath(field.path);
    const entry = byPath.get(where);
    if (entry) entry.keys.push(field.key);
    else if (byPath.size < max) byPath.set(where, { keys: [field.key], allowed: field.allowed });
  }
  return [...byPath].map(([where, { keys, allowed }]) => ({
    path: where,
    message: `remove the unknown field${keys.length === 1 ? '' : 's'} ${keys
      .slice(0, 10)
      .map((k) => `\`${k}\``)
      .join(
        ', ',
      )}${keys.length > 10 ? ` and ${keys.length - 10} more` : ''}${where === '(root)' ? '' : ` in \`${where}\``} (allowed: ${allowed.slice(0, 20).join(', ') || 'none'}${allowed.length > 20 ? ', …' : ''})`,
  }));
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
