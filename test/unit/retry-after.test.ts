import { parseHttpDate, parseRetryAfter } from '../../src/failures/retry-after';

const NOW = Date.UTC(1994, 10, 6, 8, 49, 0); // Sun, 06 Nov 1994 08:49:00 GMT
const TARGET = Date.UTC(1994, 10, 6, 8, 49, 37); // 37 s later

describe('parseRetryAfter', () => {
  test('delay-seconds are returned in milliseconds', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
  });

  test('zero seconds means retry now', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
  });

  test('an IMF-fixdate gives the time until that date', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(37_000);
  });

  test('an rfc850 date gives the time until that date', () => {
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(37_000);
  });

  test('an asctime date with a space-padded day gives the time until that date', () => {
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', NOW)).toBe(37_000);
  });

  test('an asctime date with a two-digit day is accepted', () => {
    expect(parseRetryAfter('Wed Nov 16 08:49:37 1994', NOW)).toBe(TARGET + 10 * 86_400_000 - NOW);
  });

  test('an rfc850 year more than 50 years ahead means the previous century', () => {
    const now2030 = Date.UTC(2030, 0, 1);
    // 2081 would be 51 years ahead of 2030, so "81" is 1981: in the past.
    expect(parseHttpDate('Thursday, 01-Jan-81 00:00:00 GMT', now2030)).toBe(Date.UTC(1981, 0, 1));
    expect(parseRetryAfter('Thursday, 01-Jan-81 00:00:00 GMT', now2030)).toBe(0);
  });

  test('an rfc850 year at most 50 years ahead stays in this century', () => {
    const now2030 = Date.UTC(2030, 0, 1);
    expect(parseHttpDate('Friday, 01-Jan-80 00:00:00 GMT', now2030)).toBe(Date.UTC(2080, 0, 1));
    expect(parseHttpDate('Monday, 01-Jan-35 00:00:00 GMT', now2030)).toBe(Date.UTC(2035, 0, 1));
  });

  test('a date in the past gives 0', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:00:00 GMT', NOW)).toBe(0);
  });

  test('a negative number is rejected', () => {
    expect(parseRetryAfter('-5', NOW)).toBeUndefined();
  });

  test('a fractional number is rejected', () => {
    expect(parseRetryAfter('1.5', NOW)).toBeUndefined();
  });

  test.each([
    'soon',
    '',
    '   ',
    '12abc',
    '0x10',
    '1e3',
    'Sun, 06 Nov 1994 08:49:37 UTC',
    'Sun, 6 Nov 1994 08:49:37 GMT',
  ])('garbage %p is rejected', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  test.each([
    ['an impossible day', 'Mon, 31 Feb 1994 08:49:37 GMT'],
    ['an hour of 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['a minute of 60', 'Sun, 06 Nov 1994 08:60:00 GMT'],
    ['an unknown month', 'Sun, 06 Foo 1994 08:49:37 GMT'],
  ])('a date with %s is rejected', (_label, value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  test('a leap second is accepted', () => {
    expect(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT')).toBe(Date.UTC(2017, 0, 1));
  });

  test('surrounding whitespace is ignored for seconds', () => {
    expect(parseRetryAfter('  30\t', NOW)).toBe(30_000);
  });

  test('surrounding whitespace is ignored for dates', () => {
    expect(parseRetryAfter(' Sun, 06 Nov 1994 08:49:37 GMT ', NOW)).toBe(37_000);
  });

  test('null and undefined mean no header', () => {
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });

  test('a number too large to represent is rejected', () => {
    expect(parseRetryAfter('9'.repeat(400), NOW)).toBeUndefined();
  });

  test('the current time defaults to Date.now()', () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const ms = parseRetryAfter(inTenSeconds);
    expect(ms).toBeGreaterThan(8_000);
    expect(ms).toBeLessThanOrEqual(10_000);
  });
});
