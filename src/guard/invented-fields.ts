import type { z } from 'zod';

/** A key in the arguments that the schema does not declare at that place. */
export interface InventedField {
  /** Path of the object holding the key. */
  path: ReadonlyArray<PropertyKey>;
  key: string;
  /** The keys the object schema declares there. */
  allowed: readonly string[];
}

type Def = Record<string, unknown> & { type: string };

/** Wrapper schemas followed without descending into the value before the walk gives up (a lazy loop). */
const MAX_WRAPPER_HOPS = 64;

/**
 * zod strips unknown keys by default, which would let a model's invented field reach the tool unnoticed.
 * This walks the schema and the value together and returns every key no schema declares where it sits:
 * in objects, arrays, tuples, records, unions and discriminated unions (against the member zod picks),
 * and intersections (a key is invented when neither side declares it). Loose objects
 * (`z.looseObject`, `.catchall(...)`) accept extra keys; strict objects are left to zod itself.
 *
 * Keys are read as own properties only, so `constructor` or `__proto__` are field names like any other.
 * The value must come from {@link plainJsonCopy} (nesting bounded): recursion follows the value's depth.
 */
export function findInventedFields(schema: z.ZodType, value: unknown): InventedField[] {
  const found: InventedField[] = [];
  walk(schema, value, [], found, 0);
  return found;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

function isRecordLike(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function walk(schema: z.ZodType, value: unknown, path: PropertyKey[], found: InventedField[], hops: number): void {
  const def = defOf(schema);
  if (hops > MAX_WRAPPER_HOPS) return;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return walk(def['innerType'] as z.ZodType, value, path, found, hops + 1);
    case 'pipe':
      return walk(def['in'] as z.ZodType, value, path, found, hops + 1);
    case 'lazy':
      return walk((def['getter'] as () => z.ZodType)(), value, path, found, hops + 1);
    case 'array':
      if (Array.isArray(value)) {
        value.forEach((item, i) => walk(def['element'] as z.ZodType, item, [...path, i], found, 0));
      }
      return;
    case 'tuple':
      return walkTuple(def, value, path, found);
    case 'record':
      if (isRecordLike(value)) {
        for (const key of Object.keys(value)) walk(def['valueType'] as z.ZodType, value[key], [...path, key], found, 0);
      }
      return;
    case 'object':
      return walkObject(def, value, path, found);
    case 'union':
      return walkUnion(def, value, path, found, hops);
    case 'intersection':
      return walkIntersection(def, value, path, found, hops);
    default:
      return;
  }
}

function walkTuple(def: Def, value: unknown, path: PropertyKey[], found: InventedField[]): void {
  if (!Array.isArray(value)) return;
  const items = def['items'] as z.ZodType[];
  const rest = def['rest'] as z.ZodType | null | undefined;
  value.forEach((item, i) => {
    const itemSchema = items[i] ?? rest;
    if (itemSchema) walk(itemSchema, item, [...path, i], found, 0);
  });
}

function walkObject(def: Def, value: unknown, path: PropertyKey[], found: InventedField[]): void {
  if (!isRecordLike(value)) return;
  const shape = def['shape'] as Record<string, z.ZodType>;
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(shape, key)) walk(shape[key]!, value[key], [...path, key], found, 0);
    else if (def['catchall'] === undefined) found.push({ path, key, allowed: Object.keys(shape) });
  }
}

/** Keys are judged against the member zod itself picks (the first that parses); failing that, the closest. */
function walkUnion(def: Def, value: unknown, path: PropertyKey[], found: InventedField[], hops: number): void {
  const options = def['options'] as z.ZodType[];
  const chosen = options.find((option) => option.safeParse(value).success);
  if (chosen) return walk(chosen, value, path, found, hops + 1);
  let best: InventedField[] | undefined;
  for (const option of options) {
    const mine: InventedField[] = [];
    walk(option, value, path, mine, hops + 1);
    if (!best || mine.length < best.length) best = mine;
  }
  found.push(...(best ?? []));
}

/**
 * A key is invented only when neither side of the intersection declares it: a side's finding stands when
 * the other side reports it too, or never looked there (it reported an ancestor of it as unknown).
 */
function walkIntersection(def: Def, value: unknown, path: PropertyKey[], found: InventedField[], hops: number): void {
  const left: InventedField[] = [];
  const right: InventedField[] = [];
  walk(def['left'] as z.ZodType, value, path, left, hops + 1);
  walk(def['right'] as z.ZodType, value, path, right, hops + 1);
  const leftIds = new Set(left.map(idOf));
  const rightIds = new Set(right.map(idOf));
  const stands = (field: InventedField, otherIds: ReadonlySet<string>): boolean =>
    otherIds.has(idOf(field)) ||
    field.path.some((_, i) =>
      otherIds.has(idOf({ path: field.path.slice(0, i), key: String(field.path[i]), allowed: [] })),
    );
  found.push(...left.filter((field) => stands(field, rightIds)));
  found.push(...right.filter((field) => !leftIds.has(idOf(field)) && stands(field, leftIds)));
}

function idOf(field: InventedField): string {
  return JSON.stringify([...field.path.map(String), field.key]);
}
