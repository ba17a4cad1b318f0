/**
 * The JSON half of the model-turn check, on the worker before anything reaches Temporal: a provider is
 * ordinary code and may return what JSON cannot carry — a symbol as a tool name, a BigInt or a function in the
 * arguments, a `Map`, a cycle, `undefined` inside an array. Temporal's JSON converter would drop such values
 * silently (a function as arguments became `{}` and the tool ran) or throw a TypeError that failed every retry
 * of the model step. Here each is found, with its place, so the turn becomes a `MODEL_OUTPUT_NOT_JSON` issue
 * the model reads, and the workflow only ever sees JSON.
 */

/** What is not JSON in a model turn, and where (`toolCalls[0].arguments.n`). */
export interface NotJsonProblem {
  path: string;
  /** What was found there, e.g. `a bigint`, `a Map`, `a cycle`. */
  found: string;
}

/** The outcome of {@link jsonModelTurn}: a copy of the turn made of JSON values only, or the first problem. */
export type JsonModelTurn = { ok: true; turn: unknown } | { ok: false; problem: NotJsonProblem };

/** Fields of a turn the run uses: a value there that is not JSON makes the turn an issue. */
const TURN_FIELDS = ['text', 'toolCalls', 'done', 'issue'] as const;
/** Fields that are accounting only: a value there that is not JSON is dropped (as the turn schema drops junk). */
const METADATA_FIELDS = ['usage', 'modelId', 'finishReason'] as const;
/** Fields of one tool call the run uses; anything else a provider attaches to a call is ignored. */
const CALL_FIELDS = ['id', 'name', 'arguments'] as const;

/** Characters of a path kept in a problem (keys come from the provider and may be long). */
const PATH_MAX_CHARS = 200;

/**
 * A copy of a provider's turn holding JSON values only, each property read once (a getter cannot answer
 * differently later), or the first value that is not JSON. Only the fields the run reads are judged — `text`,
 * `toolCalls` (their `id`, `name`, `arguments`), `done`, `issue`; `usage`, `modelId` and `finishReason` are kept
 * when they are JSON and dropped otherwise; other fields are left out, as the turn schema would strip them. A
 * turn that is JSON but not a turn (a string, `{ toolCalls: 'x' }`) is returned as it is, for the turn schema
 * to refuse. Never throws, whatever the provider returned (proxies and throwing getters included).
 *
 * Not JSON: symbols, BigInts, functions, `NaN` / `Infinity`, `undefined` or a hole inside an array, objects
 * that are neither plain objects nor arrays (`Map`, `Set`, `Date`, class instances), cycles. `undefined` as the
 * value of an object's field is an absent field, as in JSON. The turn itself may be any object: its own fields
 * are read, as JSON would.
 */
export function jsonModelTurn(raw: unknown): JsonModelTurn {
  try {
    const notJson = problemOfLeaf(raw);
    if (notJson) return { ok: false, problem: { path: '(turn)', found: notJson } };
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: true, turn: raw };
    const turn: Record<string, unknown> = {};
    for (const field of TURN_FIELDS) {
      const value = read(raw, field);
      const copy = jsonCopy(field === 'toolCalls' ? callFieldsOnly(value) : value, field);
      if (!copy.ok) return copy;
      if (copy.value !== undefined) turn[field] = copy.value;
    }
    for (const field of METADATA_FIELDS) {
      const copy = jsonCopy(read(raw, field), field);
      if (copy.ok && copy.value !== undefined) turn[field] = copy.value;
    }
    return { ok: true, turn };
  } catch (error) {
    return {
      ok: false,
      problem: { path: '(turn)', found: `a value that could not be read (${describeThrown(error)})` },
    };
  }
}

/** The message of the issue a turn with a {@link NotJsonProblem} becomes. */
export function notJsonMessage(problem: NotJsonProblem): string {
  const path = problem.path.length > PATH_MAX_CHARS ? `${problem.path.slice(0, PATH_MAX_CHARS)}…` : problem.path;
  return (
    `The model's turn is not JSON: \`${path}\` is ${problem.found}. ` +
    'Send tool names as strings and the arguments of each call as one JSON object.'
  );
}

/**
 * `toolCalls` with only the fields of a call (`id`, `name`, `arguments`), each read once: what else a provider
 * attaches to a call is left out before the copy judges it. Anything that is not an array of objects is
 * returned as it is, for the copy and then the turn schema to judge.
 */
function callFieldsOnly(calls: unknown): unknown {
  if (!Array.isArray(calls)) return calls;
  const length = (calls as unknown[]).length;
  const picked = new Array<unknown>(length);
  for (let i = 0; i < length; i++) {
    if (!(i in calls)) continue; // a hole stays a hole: the copy reports it
    const call: unknown = (calls as unknown[])[i];
    if (call === null || typeof call !== 'object' || Array.isArray(call) || !isPlainObject(call)) {
      picked[i] = call;
      continue;
    }
    const kept: Record<string, unknown> = {};
    for (const field of CALL_FIELDS) if (Object.hasOwn(call, field)) kept[field] = call[field];
    picked[i] = kept;
  }
  return picked;
}

type Copy = { ok: true; value: unknown } | { ok: false; problem: NotJsonProblem };

/** A container still to copy. Its path (for a message only) is its parents' keys and its own. */
interface Frame {
  source: object;
  parent: Frame | undefined;
  /** Its key in the parent; the root field's name for the root. */
  key: string | number;
  /** Where its copy goes: `target[slot]`. */
  target: Record<string | number, unknown>;
  slot: string | number;
}

/**
 * An iterative copy of `value` made of JSON values only (no input can overflow the stack), or the first value
 * that is not JSON. Objects are ordinary objects with own data properties (a `__proto__` key stays a key).
 * Leaves are copied where they are found; only containers take a frame; paths are built only for a problem.
 */
function jsonCopy(value: unknown, rootPath: string): Copy {
  const holder: Record<string | number, unknown> = {};
  const leaf = problemOfLeaf(value);
  if (leaf) return notJson(pathOf(undefined, rootPath), leaf);
  if (value === null || typeof value !== 'object') return { ok: true, value };
  // The containers from the root to the one being copied (depth-first): a value among them is a cycle.
  const ancestors = new Set<object>();
  const line: Frame[] = [];
  const stack: Frame[] = [{ source: value, parent: undefined, key: rootPath, target: holder, slot: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { source } = frame;
    while (line.length > 0 && line[line.length - 1] !== frame.parent) ancestors.delete(line.pop()!.source);
    if (ancestors.has(source)) return notJson(pathOf(frame), 'a cycle (an object that contains itself)');
    const isArray = Array.isArray(source);
    if (!isArray && !isPlainObject(source)) return notJson(pathOf(frame), describeObject(source));
    ancestors.add(source);
    line.push(frame);
    if (isArray) {
      const items = source as unknown[];
      const length = items.length;
      const copy = new Array<unknown>(length);
      const containers: Frame[] = [];
      for (let i = 0; i < length; i++) {
        if (!(i in items)) return notJson(pathOf(frame, i), 'a hole (an empty array slot)');
        const item = items[i];
        if (item === undefined) return notJson(pathOf(frame, i), 'undefined inside an array');
        const problem = copyChild(item, frame, i, copy as unknown as Record<number, unknown>, containers);
        if (problem) return problem;
      }
      for (let i = containers.length - 1; i >= 0; i--) stack.push(containers[i]!);
      setOwn(frame.target, frame.slot, copy);
    } else {
      const copy: Record<string, unknown> = {};
      const containers: Frame[] = [];
      for (const key of Object.keys(source)) {
        const problem = copyChild((source as Record<string, unknown>)[key], frame, key, copy, containers);
        if (problem) return problem;
      }
      for (let i = containers.length - 1; i >= 0; i--) stack.push(containers[i]!);
      setOwn(frame.target, frame.slot, copy);
    }
  }
  return { ok: true, value: holder[0] };
}

/**
 * Copies a leaf into `target[key]`, or holds the key's place (so the copy keeps the source's key order) and
 * adds the container to `containers`, to be copied there; the problem of a value that cannot be JSON.
 * `undefined` is left out (an absent field).
 */
function copyChild(
  value: unknown,
  parent: Frame,
  key: string | number,
  target: Record<string | number, unknown>,
  containers: Frame[],
): Copy | undefined {
  if (value === undefined) return undefined;
  if (value !== null && typeof value === 'object') {
    setOwn(target, key, null);
    containers.push({ source: value, parent, key, target, slot: key });
    return undefined;
  }
  const leaf = problemOfLeaf(value);
  if (leaf) return notJson(pathOf(parent, key), leaf);
  setOwn(target, key, value);
  return undefined;
}

function notJson(path: string, found: string): Copy {
  return { ok: false, problem: { path, found } };
}

/** `toolCalls[0].arguments.n`: the keys from the root field to `frame`, then `lastKey`. */
function pathOf(frame: Frame | undefined, lastKey?: string | number): string {
  const keys: Array<string | number> = lastKey === undefined ? [] : [lastKey];
  for (let f = frame; f; f = f.parent) keys.push(f.key);
  let path = '';
  for (const key of keys.reverse()) path += typeof key === 'number' ? `[${key}]` : path ? `.${key}` : key;
  return path;
}

/** Undefined for a JSON leaf, `undefined` or a container; what the value is when it cannot be JSON at all. */
function problemOfLeaf(value: unknown): string | undefined {
  switch (typeof value) {
    case 'bigint':
      return 'a BigInt (JSON numbers are not BigInts)';
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    case 'number':
      return Number.isFinite(value) ? undefined : `${String(value)} (not a JSON number)`;
    default:
      return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  // A root prototype of any realm, or none.
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function describeObject(value: object): string {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  const name = tag === 'Object' ? 'an instance of a class' : `a ${tag}`;
  return `${name} (only plain objects and arrays are JSON)`;
}

/** A property, read once; a key that would set the prototype is read as a field. */
function read(source: object, key: string): unknown {
  return Object.hasOwn(source, key) ? (source as Record<string, unknown>)[key] : undefined;
}

/** Adds an own data property, also for a key such as `__proto__` (which assignment would treat as the prototype). */
function setOwn(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function describeThrown(error: unknown): string {
  if (error instanceof Error) return error.message.slice(0, 200);
  return typeof error === 'string' ? error.slice(0, 200) : typeof error;
}
