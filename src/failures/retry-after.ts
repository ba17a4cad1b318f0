/**
 * Parsing of the HTTP `Retry-After` header (RFC 9110 §10.2.3) into a delay in milliseconds.
 * Written by hand: `Date.parse` is implementation-defined for the obsolete rfc850 and asctime forms.
 */

/** Constants of the HTTP-date grammar (RFC 9110 §5.6.7). */
export const HTTP_DATE = {
  /** An rfc850 date more than this many years ahead means the same two digits a century earlier. */
  twoDigitYearWindowYears: 50,
  shortDayNames: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'],
  longDayNames: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'],
  monthNames: ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'],
} as const;

const SHORT_DAY = HTTP_DATE.shortDayNames.join('|');
const LONG_DAY = HTTP_DATE.longDayNames.join('|');
const MONTH = HTTP_DATE.monthNames.join('|');
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(`^(?:${SHORT_DAY}), (\\d{2}) (${MONTH}) (\\d{4}) ${TIME} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT` */
const RFC850_DATE = new RegExp(`^(?:${LONG_DAY}), (\\d{2})-(${MONTH})-(\\d{2}) ${TIME} GMT$`);
/** `Sun Nov  6 08:49:37 1994` (the day is two digits or a space and one digit) */
const ASCTIME_DATE = new RegExp(`^(?:${SHORT_DAY}) (${MONTH}) (\\d{2}| \\d) ${TIME} (\\d{4})$`);
/** delay-seconds = 1*DIGIT */
const DELAY_SECONDS = /^\d+$/;

/**
 * Converts a `Retry-After` value into how long to wait, in milliseconds.
 *
 * Accepts delay-seconds (a non-negative integer) and the three HTTP-date forms a recipient must accept:
 * IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), obsolete rfc850 (`Sunday, 06-Nov-94 08:49:37 GMT`,
 * where a two-digit year more than 50 years ahead of `nowMs` means the previous century) and obsolete
 * asctime (`Sun Nov  6 08:49:37 1994`). Surrounding whitespace is ignored; the grammar is otherwise
 * matched exactly (case-sensitive, as RFC 9110 says). The day name is not checked against the date.
 *
 * @param value the header value; `null` / `undefined` mean "no header".
 * @param nowMs the current time, used for dates.
 * @returns the delay in milliseconds; `0` for a date in the past; `undefined` when the value is
 *   missing, negative, fractional or unparseable (the caller then falls back to its own backoff).
 *
 * @example
 * ```ts
 * parseRetryAfter('120'); // 120_000
 * parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', Date.UTC(1994, 10, 6, 8, 49, 0)); // 37_000
 * parseRetryAfter('soon'); // undefined
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '') return undefined;

  if (DELAY_SECONDS.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isFinite(ms) ? ms : undefined;
  }

  const dateMs = parseHttpDate(text, nowMs);
  if (dateMs === undefined) return undefined;
  return Math.max(0, dateMs - nowMs);
}

/**
 * Parses an HTTP-date (any of the three RFC 9110 forms) into epoch milliseconds, or `undefined`.
 *
 * @param nowMs anchors the two-digit-year rule of rfc850 dates.
 */
export function parseHttpDate(text: string, nowMs: number = Date.now()): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return toEpochMs(m[3], m[2], m[1], m[4], m[5], m[6]);

  m = RFC850_DATE.exec(text);
  if (m) {
    const twoDigits = Number(m[3]);
    const currentYear = new Date(nowMs).getUTCFullYear();
    let year = currentYear - (currentYear % 100) + twoDigits;
    if (year > currentYear + HTTP_DATE.twoDigitYearWindowYears) year -= 100;
    return toEpochMs(String(year), m[2], m[1], m[4], m[5], m[6]);
  }

  m = ASCTIME_DATE.exec(text);
  if (m) return toEpochMs(m[6], m[1], m[2], m[3], m[4], m[5]);

  return undefined;
}

function toEpochMs(
  yearText: string | undefined,
  monthName: string | undefined,
  dayText: string | undefined,
  hourText: string | undefined,
  minuteText: string | undefined,
  secondText: string | undefined,
): number | undefined {
  const year = Number(yearText);
  const month = (HTTP_DATE.monthNames as readonly string[]).indexOf(monthName ?? '');
  const day = Number(dayText?.trim());
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = Number(secondText);
  if (month < 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  date.setUTCHours(hour, minute, 0, 0);
  if (date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined; // e.g. 31 Feb
  // second = 2DIGIT allows 60 for a leap second: added last so it cannot fail the calendar check.
  return date.getTime() + second * 1000;
}
