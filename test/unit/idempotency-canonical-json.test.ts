import { createHash } from 'node:crypto';
import { canonicalJson, fingerprint, IdempotencyStoreError, strictJsonStringify } from '../../src/stores/idempotency';

function notJsonMessage(value: unknown): string {
  try {
    canonicalJson(value);
  } catch (error) {
    expect(error).toBeInstanceOf(IdempotencyStoreError);
    expect((error as IdempotencyStoreError).code).toBe('NOT_JSON');
    return (error as Error).message;
  }
  throw new Error('canonicalJson accepted a value that is not JSON');
}

describe('canonicalJson', () => {
  it('sorts object keys at every depth', () => {
    expect(canonicalJson({ b: [1, { d: true, c: null }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":null,"d":true}]}');
  });

  it('sorts keys by UTF-16 code units, as in the example of RFC 8785 section 3.2.3', () => {
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    const order = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'];

    expect(canonicalJson(value)).toBe(
      `{${order.map((key) => `${JSON.stringify(key)}:${JSON.stringify(value[key as keyof typeof value])}`).join(',')}}`,
    );
  });

  it('writes numbers in the shortest ECMAScript form, with -0 as 0', () => {
    expect(canonicalJson([1.0, -0, 1e21, 1e-7, 0.1 + 0.2, 333333333.3333333])).toBe(
      '[1,0,1e+21,1e-7,0.30000000000000004,333333333.3333333]',
    );
  });

  it('escapes strings like JSON.stringify and keeps other characters literal', () => {
    expect(canonicalJson('\u0000\b\f\n\r\t"\\/é€😀')).toBe('"\\u0000\\b\\f\\n\\r\\t\\"\\\\/é€😀"');
  });

  it('drops object fields whose value is undefined', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it('uses toJSON like JSON.stringify, so a date becomes its ISO string', () => {
    expect(canonicalJson({ at: new Date(Date.UTC(2026, 0, 2)) })).toBe('{"at":"2026-01-02T00:00:00.000Z"}');
  });

  it('rejects functions, symbols and bigints with the path of the offending value', () => {
    expect(notJsonMessage({ a: [{ f: () => 1 }] })).toMatch('$.a[0].f');
    expect(notJsonMessage({ s: Symbol('x') })).toMatch('symbol');
    expect(notJsonMessage({ 'odd key': 10n })).toMatch('$["odd key"]');
  });

  it('rejects NaN and infinities', () => {
    expect(notJsonMessage(NaN)).toMatch('not a finite number');
    expect(notJsonMessage([Infinity])).toMatch('$[0]');
    expect(notJsonMessage({ x: -Infinity })).toMatch('$.x');
  });

  it('rejects undefined at the top level and inside arrays, including holes', () => {
    expect(notJsonMessage(undefined)).toMatch('undefined');
    expect(notJsonMessage([1, undefined])).toMatch('$[1]');
    expect(notJsonMessage([1, , 3])).toMatch('hole');
  });

  it('rejects circular references', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };

    expect(notJsonMessage(cyclic)).toMatch('circular');
  });

  it('accepts the same object twice when it is shared rather than circular', () => {
    const shared = { n: 1 };

    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"n":1},"b":{"n":1}}');
  });

  it('rejects maps, sets and class instances without toJSON', () => {
    class Point {
      constructor(readonly x: number) {}
    }

    expect(notJsonMessage(new Map())).toMatch('Map');
    expect(notJsonMessage({ s: new Set([1]) })).toMatch('Set');
    expect(notJsonMessage(new Point(1))).toMatch('Point');
  });

  it('accepts objects without a prototype', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.b = 2;
    bare.a = 1;

    expect(canonicalJson(bare)).toBe('{"a":1,"b":2}');
  });

  it('rejects strings with a lone surrogate, which are not I-JSON', () => {
    expect(notJsonMessage({ s: 'a\ud800b' })).toMatch('lone surrogate');
    expect(notJsonMessage({ ['\udc00']: 1 })).toMatch('lone surrogate');
  });
});

describe('strictJsonStringify', () => {
  it('keeps the insertion order of keys', () => {
    expect(strictJsonStringify({ b: 1, a: { d: 1, c: 2 } })).toBe('{"b":1,"a":{"d":1,"c":2}}');
  });

  it('rejects what canonicalJson rejects', () => {
    expect(() => strictJsonStringify({ n: NaN })).toThrow(IdempotencyStoreError);
  });
});

describe('fingerprint', () => {
  it('is the lowercase hex SHA-256 of the canonical JSON', () => {
    const expected = createHash('sha256').update('{"a":1,"b":[true,null]}').digest('hex');

    expect(fingerprint({ b: [true, null], a: 1 })).toBe(expected);
  });

  it('is the same for the same data in another key order', () => {
    expect(fingerprint({ x: { b: 1, a: 2 }, y: 3 })).toBe(fingerprint({ y: 3, x: { a: 2, b: 1 } }));
  });

  it('differs when a nested value differs', () => {
    expect(fingerprint({ x: { a: 1 } })).not.toBe(fingerprint({ x: { a: '1' } }));
  });
});
