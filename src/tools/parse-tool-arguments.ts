import type { z } from 'zod';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../protocol/activity-protocol';

/** The outcome of checking a model's arguments against a tool's input schema. */
export type ParsedToolArguments<T> = { ok: true; value: T } | { ok: false; error: ToolErrorObservation };

type Issue = { path: string; message: string };

/**
 * Checks a model's raw tool arguments against the tool's input schema and explains every problem in
 * words the model can act on. Catches the four classic faults of model output:
 * - a string that is not JSON (or JSON that is not an object),
 * - type drift (`"10"` for `10`),
 * - an enum value that does not exist,
 * - invented fields (rejected even where the schema would silently strip them).
 *
 * Nothing is coerced: a call either matches the contract exactly or never reaches the implementation.
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
        `The arguments are not valid JSON: ${(cause as Error).message}.`,
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

  const issues: Issue[] = findInventedFields(schema, value, []);
  const result = schema.safeParse(value);
  if (result.success && issues.length === 0) return { ok: true, value: result.data };
  if (!result.success) {
    for (const issue of result.error.issues) issues.push(explainIssue(issue, value));
  }
  const hints = issues.map((i) => i.message);
  return fail(
    `The arguments do not match the tool's input schema (${issues.length} problem${issues.length === 1 ? '' : 's'}).`,
    `Fix and call again: ${hints.join('; ')}.`,
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

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return '(root)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
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

/**
 * zod strips unknown keys by default, which would let a model's invented field pass unnoticed. This
 * walks the schema and the value together and reports keys no object schema declares. Objects that
 * were declared loose (`z.looseObject`, `.catchall(...)`) accept extra keys and are left alone; strict
 * objects are reported by zod itself.
 */
function findInventedFields(schema: z.ZodType, value: unknown, path: PropertyKey[]): Issue[] {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return findInventedFields(def.innerType as z.ZodType, value, path);
    case 'pipe':
      return findInventedFields(def.in as z.ZodType, value, path);
    case 'lazy':
      return findInventedFields((def.getter as () => z.ZodType)(), value, path);
    case 'array':
      return Array.isArray(value)
        ? value.flatMap((item, i) => findInventedFields(def.element as z.ZodType, item, [...path, i]))
        : [];
    case 'union': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
      const options = def.options as z.ZodType[];
      // A key is invented only when no alternative of the union knows it.
      const perOption = options.map((o) => findInventedFields(o, value, path));
      if (perOption.some((issues) => issues.length === 0)) return [];
      return perOption.reduce((a, b) => a.filter((x) => b.some((y) => y.message === x.message)));
    }
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
      const shape = def.shape as Record<string, z.ZodType>;
      const record = value as Record<string, unknown>;
      const issues: Issue[] = [];
      if (def.catchall === undefined) {
        const unknown = Object.keys(record).filter((k) => !(k in shape));
        if (unknown.length > 0) {
          const where = formatPath(path);
          issues.push({
            path: where,
            message: `remove the unknown field${unknown.length === 1 ? '' : 's'} ${unknown.map((k) => `\`${k}\``).join(', ')}${path.length === 0 ? '' : ` in \`${where}\``} (allowed: ${Object.keys(shape).join(', ') || 'none'})`,
          });
        }
      }
      for (const [key, child] of Object.entries(shape)) {
        if (key in record) issues.push(...findInventedFields(child, record[key], [...path, key]));
      }
      return issues;
    }
    default:
      return [];
  }
}
