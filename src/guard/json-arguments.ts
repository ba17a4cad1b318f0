/**
 * The structural half of the argument guard: what a model sent must be plain JSON that the rest of the
 * engine (fingerprint, idempotency store, Temporal payloads) can take without failing later. Iterative, so
 * no input can overflow the stack; one pass, linear in the size of the input.
 */

/** Limits of the argument guard: the defaults, a worker's (`createWorker({ argumentGuard })`) or a tool's. */
export interface ArgumentGuardLimits {
  /** Deepest nesting of objects and arrays accepted in a tool's arguments. */
  maxDepth: number;
  /** Problems (invented fields, schema errors) listed one by one in an `INVALID_ARGUMENTS` error; the rest are counted. */
  maxIssues: number;
  /** Characters of one problem's text kept in the error. */
  maxIssueChars: number;
}

/** Default limits of the argument guard (see {@link ARGUMENT_GUARD_CEILINGS} for the highest allowed). */
export const ARGUMENT_GUARD_LIMITS = {
  maxDepth: 64,
  maxIssues: 10,
  maxIssueChars: 300,
} as const satisfies ArgumentGuardLimits;

/**
 * The key that no argument object may hold, at any depth: assigning it (as zod does for the keys of a
 * `z.record` or a loose object, or `Object.assign` in a tool) replaces the object's prototype instead of
 * adding a field.
 */
export const FORBIDDEN_ARGUMENT_KEY = '__proto__';

/** Why arguments are not acceptable JSON, and where. */
export interface JsonProblem {
  path: string;
  message: string;
  hint: string;
}

/**
 * The outcome of {@link plainJsonCopy}. `forbiddenKeyPaths` lists the paths of the objects holding a
 * {@link FORBIDDEN_ARGUMENT_KEY} key (kept as an own key in the copy), for the guard to refuse.
 */
export type PlainJsonCopy =
  { ok: true; value: unknown; forbiddenKeyPaths: Array<Array<string | number>> } | { ok: false; problem: JsonProblem };

type Container = Record<string, unknown> | unknown[];

/**
 * Objects with no inherited members: their prototype is an empty object whose own prototype is null.
 * (Faster than `Object.create(null)`, whose objects start in dictionary mode.)
 */
const BareObject = function BareObject(this: object) {} as unknown as new () => object;
BareObject.prototype = Object.create(null) as object;

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/** Whether a string is well-formed UTF-16 (no lone surrogate): `String.prototype.isWellFormed` where it exists. */
function isWellFormed(text: string): boolean {
  return nativeIsWellFormed ? nativeIsWellFormed.call(text) : !LONE_SURROGATE.test(text);
}

/** One value still to copy: where it sits (for messages), and where its copy goes. */
interface Frame {
  source: unknown;
  depth: number;
  parent: Frame | undefined;
  key: string | number;
  target: Container | undefined;
}

/**
 * Copies a parsed JSON value into objects without a prototype (so `constructor`, `toString` or `__proto__`
 * are ordinary own keys, never inherited members), checking on the way that it is plain JSON: only objects,
 * arrays, strings, finite numbers, booleans and null; no lone surrogates in strings or keys; nesting at most
 * `maxDepth` deep. The copy is for validation: {@link restoreObjectPrototypes} makes its objects ordinary
 * before a tool sees them.
 */
export function plainJsonCopy(input: unknown, maxDepth: number = ARGUMENT_GUARD_LIMITS.maxDepth): PlainJsonCopy {
  const holder: unknown[] = [undefined];
  const forbiddenKeyPaths: Array<Array<string | number>> = [];
  const stack: Frame[] = [{ source: input, depth: 0, parent: undefined, key: 0, target: holder }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { source, depth } = frame;
    const leaf = leafProblem(source);
    if (leaf === null) {
      (frame.target as Record<string | number, unknown>)[frame.key] = source;
      continue;
    }
    if (leaf) return { ok: false, problem: { path: pathOf(frame), ...leaf } };
    if (depth >= maxDepth) {
      return {
        ok: false,
        problem: {
          path: pathOf(frame),
          message: `nesting deeper than ${maxDepth} levels`,
          hint: `Flatten the arguments: objects and arrays may be nested at most ${maxDepth} levels deep.`,
        },
      };
    }
    let copy: Container;
    if (Array.isArray(source)) {
      copy = new Array<unknown>(source.length);
      for (let i = source.length - 1; i >= 0; i--) {
        stack.push({ source: source[i], depth: depth + 1, parent: frame, key: i, target: copy });
      }
    } else {
      copy = new BareObject() as Record<string, unknown>;
      const keys = Object.keys(source as object);
      for (const key of keys) {
        if (!isWellFormed(key)) {
          return { ok: false, problem: { path: pathOf(frame, key), ...loneSurrogate('the key') } };
        }
        if (key === FORBIDDEN_ARGUMENT_KEY) forbiddenKeyPaths.push(keysOf(frame));
      }
      // Pushed last key first, so the copy's keys come out in the order the model wrote them.
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const value = (source as Record<string, unknown>)[key];
        if (value !== undefined) stack.push({ source: value, depth: depth + 1, parent: frame, key, target: copy });
      }
    }
    (frame.target as Record<string | number, unknown>)[frame.key] = copy;
  }
  return { ok: true, value: holder[0], forbiddenKeyPaths };
}

/**
 * Gives every object of a {@link plainJsonCopy} (and so every object zod passed through from it: the values of
 * `z.any()`, `z.unknown()`, loose objects and records) `Object.prototype` back, in place, once validation is
 * over: the tool then gets what `JSON.parse` would have made — ordinary objects whose keys, `toString` or
 * `constructor` included, are own data properties — so `String(x)`, template literals, `JSON.stringify` and
 * `x.hasOwnProperty` behave as usual. Validation needs the bare prototype (zod and the invented-field walk
 * must not see inherited members as present fields); the tool needs the ordinary one. Iterative; only the
 * copy's own objects are touched (never `Object.prototype` itself).
 */
export function restoreObjectPrototypes(copy: unknown): void {
  const stack: unknown[] = [copy];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    if (Object.getPrototypeOf(node) !== BareObject.prototype) continue;
    Object.setPrototypeOf(node, Object.prototype);
    for (const key of Object.keys(node)) stack.push((node as Record<string, unknown>)[key]);
  }
}

/** The keys leading from the root to the value of `frame`. */
function keysOf(frame: Frame): Array<string | number> {
  const keys: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) keys.push(f.key);
  return keys.reverse();
}

/** `a.b[2].c`, or `(root)`; built only for an error message. */
function pathOf(frame: Frame, lastKey?: string): string {
  const parts = keysOf(frame);
  if (lastKey !== undefined) parts.push(lastKey);
  let path = '';
  for (const part of parts) path += typeof part === 'number' ? `[${part}]` : path ? `.${part}` : part;
  return path || '(root)';
}

/**
 * `null` for an acceptable leaf, a problem for an unacceptable value, `undefined` for a container
 * (plain object or array) still to visit.
 */
function leafProblem(value: unknown): Omit<JsonProblem, 'path'> | null | undefined {
  switch (typeof value) {
    case 'string':
      return isWellFormed(value) ? null : loneSurrogate('the string');
    case 'number':
      return Number.isFinite(value)
        ? null
        : { message: `${value} is not a JSON number`, hint: 'Send finite numbers only.' };
    case 'boolean':
      return null;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return undefined;
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto === null || Object.getPrototypeOf(proto) === null) return undefined;
      return { message: 'not a plain JSON object', hint: 'Send plain JSON values only.' };
    }
    default:
      return { message: `${typeof value} is not JSON`, hint: 'Send plain JSON values only.' };
  }
}

function loneSurrogate(what: string): Omit<JsonProblem, 'path'> {
  return {
    message: `${what} contains a lone UTF-16 surrogate (not valid Unicode text)`,
    hint: 'Send well-formed Unicode text: every \\ud800-\\udbff escape must be followed by a \\udc00-\\udfff one.',
  };
}

/** Deepest nesting of a tool's result the engine accepts (Temporal and the stores serialise recursively). */
export const OUTPUT_MAX_DEPTH = 512;

/** Whether objects and arrays in `value` nest deeper than `maxDepth` levels. Iterative; stops at the first. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 0 }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    if (depth >= maxDepth) return true;
    seen.add(node);
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push({ node: child, depth: depth + 1 });
  }
  return false;
}

type StringifyTask = { raw: string } | { value: unknown };

/**
 * `JSON.stringify` without recursion, for values nested too deep for it (it overflows the stack at a few
 * thousand levels). Plain data only: `toJSON` is not called; `undefined`, functions and symbols are left
 * out of objects and become `null` in arrays, as `JSON.stringify` does.
 */
export function stringifyWithoutRecursion(value: unknown): string {
  const out: string[] = [];
  const tasks: StringifyTask[] = [{ value }];
  while (tasks.length > 0) {
    const task = tasks.pop()!;
    if ('raw' in task) {
      out.push(task.raw);
      continue;
    }
    const v = task.value;
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v) ?? 'null');
      continue;
    }
    const later: StringifyTask[] = [];
    if (Array.isArray(v)) {
      later.push({ raw: '[' });
      v.forEach((item, i) => later.push(...(i > 0 ? [{ raw: ',' }] : []), { value: item }));
      later.push({ raw: ']' });
    } else {
      later.push({ raw: '{' });
      let first = true;
      for (const [key, item] of Object.entries(v)) {
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        later.push({ raw: `${first ? '' : ','}${JSON.stringify(key)}:` }, { value: item });
        first = false;
      }
      later.push({ raw: '}' });
    }
    for (let i = later.length - 1; i >= 0; i--) tasks.push(later[i]!);
  }
  return out.join('');
}
