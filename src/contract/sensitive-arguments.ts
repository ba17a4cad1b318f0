/**
 * Sensitive tool arguments: fields a tool's input schema marks with `.meta({ sensitive: true })` (Zod 4 writes
 * `"sensitive": true` into the field's JSON Schema, which the catalog carries). Their values are redacted from
 * activity summaries, logs, error messages and the observations the model gets back. Pure data and string
 * work, safe in workflow code.
 */

/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]';

/** Values shorter than this are not searched for inside texts (a "1" would blank out every digit). */
const MIN_SEARCHED_LENGTH = 4;

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a tool's input JSON Schema marks any field sensitive. */
export function hasSensitiveFields(schema: unknown, depth = 0): boolean {
  if (!isSchema(schema) || depth > 32) return false;
  if (schema.sensitive === true) return true;
  const children = [
    ...Object.values(isSchema(schema.properties) ? schema.properties : {}),
    schema.items,
    schema.additionalProperties,
    ...(['anyOf', 'oneOf', 'allOf'] as const).flatMap((k) =>
      Array.isArray(schema[k]) ? (schema[k] as unknown[]) : [],
    ),
  ];
  return children.some((child) => hasSensitiveFields(child, depth + 1));
}

/**
 * The arguments with every sensitive field's value replaced by {@link REDACTED}. A string of JSON (arguments
 * as a model sent them) is parsed and written back; text that is not JSON is returned as it is. Arguments of a
 * schema without sensitive fields come back unchanged (the same object).
 */
export function redactArguments(args: unknown, schema: unknown): unknown {
  if (!hasSensitiveFields(schema)) return args;
  const parsed = parsedArguments(args);
  return parsed.ok ? redactedForm(args, parsed.value, schema as Schema) : args;
}

/** A call's arguments seen through its schema's sensitive fields: their values, and the redacted arguments. */
export interface SensitiveArguments {
  /** As {@link sensitiveValues} returns them: longest first, none shorter than 4 characters. */
  secrets: string[];
  /** As {@link redactArguments} returns them: the arguments themselves when there is nothing to redact. */
  redacted: unknown;
}

/**
 * {@link sensitiveValues} and {@link redactArguments} of the same arguments at once: a string of JSON is
 * parsed once for both, and a schema without sensitive fields is walked once.
 */
export function sensitiveArguments(args: unknown, schema: unknown): SensitiveArguments {
  if (!hasSensitiveFields(schema)) return { secrets: [], redacted: args };
  const parsed = parsedArguments(args);
  if (!parsed.ok) return { secrets: [], redacted: args };
  return {
    secrets: valuesOf(parsed.value, schema as Schema),
    redacted: redactedForm(args, parsed.value, schema as Schema),
  };
}

/**
 * Arguments as a value: a string is JSON text (parsed here), anything else is the value itself; `ok: false`
 * for text that is not JSON. Parse once and pass the value on: every function here takes the value as well.
 */
export function parsedArguments(args: unknown): { ok: true; value: unknown } | { ok: false } {
  if (typeof args !== 'string') return { ok: true, value: args };
  try {
    return { ok: true, value: JSON.parse(args) as unknown };
  } catch {
    return { ok: false };
  }
}

/** The redacted arguments in the form they came in: JSON text for text, a value for a value. */
function redactedForm(args: unknown, parsed: unknown, schema: Schema): unknown {
  const redacted = redactValue(parsed, schema, 0);
  return typeof args === 'string' ? JSON.stringify(redacted) : redacted;
}

function redactValue(value: unknown, schema: Schema, depth: number): unknown {
  if (schema.sensitive === true) return REDACTED;
  if (depth > 32) return value;
  const variants = (['anyOf', 'oneOf', 'allOf'] as const).flatMap((k) =>
    Array.isArray(schema[k]) ? (schema[k] as unknown[]).filter(isSchema) : [],
  );
  let result = value;
  for (const variant of variants) result = redactValue(result, variant, depth + 1);
  if (Array.isArray(result) && isSchema(schema.items)) {
    return result.map((item) => redactValue(item, schema.items as Schema, depth + 1));
  }
  if (isSchema(result) && !Array.isArray(result)) {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const extra = isSchema(schema.additionalProperties) ? schema.additionalProperties : undefined;
    return Object.fromEntries(
      Object.entries(result).map(([key, item]) => {
        const child = isSchema(properties[key]) ? (properties[key] as Schema) : extra;
        return [key, child ? redactValue(item, child, depth + 1) : item];
      }),
    );
  }
  return result;
}

/**
 * The values of the sensitive fields of `args` as texts (strings, and numbers as their decimal text), longest
 * first, to be searched for in free text (error messages, outputs, log lines).
 */
export function sensitiveValues(args: unknown, schema: unknown): string[] {
  if (!hasSensitiveFields(schema)) return [];
  const parsed = parsedArguments(args);
  return parsed.ok ? valuesOf(parsed.value, schema as Schema) : [];
}

function valuesOf(parsed: unknown, schema: Schema): string[] {
  const found = new Set<string>();
  collect(parsed, schema, found, 0, false);
  return [...found].filter((text) => text.length >= MIN_SEARCHED_LENGTH).sort((a, b) => b.length - a.length);
}

function collect(value: unknown, schema: Schema, found: Set<string>, depth: number, inside: boolean): void {
  if (depth > 32) return;
  const sensitive = inside || schema.sensitive === true;
  if (sensitive && (typeof value === 'string' || typeof value === 'number')) found.add(String(value));
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) {
      for (const variant of (schema[key] as unknown[]).filter(isSchema))
        collect(value, variant, found, depth + 1, sensitive);
    }
  }
  if (Array.isArray(value)) {
    const items = isSchema(schema.items) ? schema.items : {};
    for (const item of value) collect(item, items, found, depth + 1, sensitive);
  } else if (isSchema(value)) {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const extra = isSchema(schema.additionalProperties) ? schema.additionalProperties : {};
    for (const [key, item] of Object.entries(value)) {
      collect(item, isSchema(properties[key]) ? (properties[key] as Schema) : extra, found, depth + 1, sensitive);
    }
  }
}

/** The text with every occurrence of the sensitive values replaced by {@link REDACTED}. */
export function redactText(text: string, values: readonly string[]): string {
  let result = text;
  for (const value of values) result = result.split(value).join(REDACTED);
  return result;
}

/**
 * A JSON value (an observation, an error's details, log metadata) with every occurrence of the sensitive
 * values inside its strings replaced by {@link REDACTED}; the value itself when there is nothing to redact.
 */
export function redactDeep<T>(value: T, values: readonly string[], depth = 0): T {
  if (values.length === 0 || depth > 64) return value;
  if (typeof value === 'string') return redactText(value, values) as T;
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, values, depth + 1)) as T;
  if (isSchema(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, values, depth + 1)])) as T;
  }
  return value;
}
