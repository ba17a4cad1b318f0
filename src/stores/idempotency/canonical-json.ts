import { createHash } from 'node:crypto';
import { IdempotencyStoreError } from './idempotency-store-error';

/** Matches a UTF-16 surrogate that is not part of a pair (with the `u` flag pairs are one code point). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The canonical JSON text of a value, after RFC 8785 (JSON Canonicalization Scheme) as far as
 * `JSON.stringify` allows: object keys sorted by UTF-16 code units at every depth, no whitespace, numbers in
 * ECMAScript shortest form (`-0` becomes `0`), strings escaped like `JSON.stringify` does. Two values with the
 * same data in a different key order have the same canonical JSON.
 *
 * Like `JSON.stringify`, object fields whose value is `undefined` are dropped and `toJSON()` is honoured
 * (a `Date` becomes its ISO string). Everything else that is not JSON is rejected rather than silently
 * changed: functions, symbols, bigints, `NaN` / `Infinity`, `undefined` at the top level or inside an array
 * (including holes), cycles, lone surrogates (not I-JSON), and objects that are neither plain objects nor
 * arrays (`Map`, `Set`, class instances without `toJSON`).
 *
 * @throws {@link IdempotencyStoreError} with code `NOT_JSON`, naming the offending path (`$.a[2].b`).
 *
 * @example
 * ```ts
 * canonicalJson({ b: [1, { d: true, c: null }], a: 'x' }); // '{"a":"x","b":[1,{"c":null,"d":true}]}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, true);
}

/**
 * JSON text of a value with the same checks as {@link canonicalJson} but keys kept in insertion order, so
 * that `JSON.parse` of it returns what `JSON.parse(JSON.stringify(value))` would. Stores use it for results
 * and failures, which are replayed as they were produced.
 *
 * @throws {@link IdempotencyStoreError} with code `NOT_JSON`.
 */
export function strictJsonStringify(value: unknown): string {
  return serialize(value, false);
}

/**
 * The fingerprint of a payload: lowercase hex SHA-256 of its {@link canonicalJson} (UTF-8). Equal data gives
 * equal fingerprints whatever the key order; the store compares fingerprints to detect a key reused with
 * other arguments.
 *
 * @throws {@link IdempotencyStoreError} with code `NOT_JSON`.
 *
 * @example
 * ```ts
 * fingerprint({ a: 1, b: 2 }) === fingerprint({ b: 2, a: 1 }); // true
 * ```
 */
export function fingerprint(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

function serialize(value: unknown, sortKeys: boolean): string {
  const out: string[] = [];
  write(value, '$', '', sortKeys, new Set<object>(), out, false);
  return out.join('');
}

function notJson(path: string, what: string): IdempotencyStoreError {
  return new IdempotencyStoreError(`Value at ${path} is not JSON: ${what}.`, 'NOT_JSON');
}

function writeString(s: string, path: string, out: string[]): void {
  if (LONE_SURROGATE.test(s)) throw notJson(path, 'string contains a lone surrogate');
  out.push(JSON.stringify(s));
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  // A root prototype of any realm (objects from vm contexts count as plain too), or none at all.
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Writes `value`; `holderKey` is passed to `toJSON` like `JSON.stringify` does. */
function write(
  value: unknown,
  path: string,
  holderKey: string,
  sortKeys: boolean,
  ancestors: Set<object>,
  out: string[],
  afterToJson: boolean,
): void {
  switch (typeof value) {
    case 'string':
      writeString(value, path, out);
      return;
    case 'number':
      if (!Number.isFinite(value)) throw notJson(path, `${value} is not a finite number`);
      out.push(JSON.stringify(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'undefined':
      throw notJson(path, 'undefined');
    case 'bigint':
      throw notJson(path, 'bigint (convert it to a string or number first)');
    case 'symbol':
      throw notJson(path, 'symbol');
    case 'function':
      throw notJson(path, 'function');
  }
  if (value === null) {
    out.push('null');
    return;
  }
  const object = value as object;
  const toJSON: unknown = (object as { toJSON?: unknown }).toJSON;
  if (!afterToJson && typeof toJSON === 'function') {
    write(toJSON.call(object, holderKey), path, holderKey, sortKeys, ancestors, out, true);
    return;
  }
  if (ancestors.has(object)) throw notJson(path, 'circular reference');
  ancestors.add(object);
  if (Array.isArray(object)) {
    out.push('[');
    for (let i = 0; i < object.length; i++) {
      if (i > 0) out.push(',');
      const itemPath = `${path}[${i}]`;
      if (!(i in object)) throw notJson(itemPath, 'array hole');
      write(object[i], itemPath, String(i), sortKeys, ancestors, out, false);
    }
    out.push(']');
  } else {
    if (!isPlainObject(object)) {
      const name = (object as { constructor?: { name?: unknown } }).constructor?.name;
      throw notJson(path, `instance of ${typeof name === 'string' && name ? name : 'a class'} (not a plain object)`);
    }
    const keys = Object.keys(object);
    if (sortKeys) keys.sort(); // Default sort compares UTF-16 code units, as RFC 8785 requires.
    out.push('{');
    let first = true;
    for (const key of keys) {
      const field: unknown = (object as Record<string, unknown>)[key];
      if (field === undefined) continue;
      const fieldPath = childPath(path, key);
      if (!first) out.push(',');
      first = false;
      writeString(key, fieldPath, out);
      out.push(':');
      write(field, fieldPath, key, sortKeys, ancestors, out, false);
    }
    out.push('}');
  }
  ancestors.delete(object);
}
