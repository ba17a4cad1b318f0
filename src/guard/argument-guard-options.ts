import { ARGUMENT_GUARD_LIMITS, type ArgumentGuardLimits } from './json-arguments';
import { DurableToolsError } from '../contract/durable-tools-error';

/** Limits of the argument guard a worker (`createWorker({ argumentGuard })`) or a tool may set; the rest default. */
export type ArgumentGuardOptions = Partial<ArgumentGuardLimits>;

/**
 * The highest value of each guard limit. `maxDepth` keeps the schema check and the fingerprint (which
 * recurse) far from the stack's limit; `maxIssues` and `maxIssueChars` keep an error observation within
 * its own budget (at most 20 problems, 2,000 characters of hint).
 */
export const ARGUMENT_GUARD_CEILINGS: Readonly<ArgumentGuardLimits> = Object.freeze({
  maxDepth: 256,
  maxIssues: 20,
  maxIssueChars: 1_000,
});

/** Codes of {@link ArgumentGuardConfigError}. */
export type ArgumentGuardConfigErrorCode = 'INVALID_ARGUMENT_GUARD';

/** A worker's `argumentGuard` setting is not valid. Raised at start-up, never during a run. */
export class ArgumentGuardConfigError extends DurableToolsError<ArgumentGuardConfigErrorCode> {
  override readonly name = 'ArgumentGuardConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'INVALID_ARGUMENT_GUARD', options);
  }
}

/**
 * Checks guard options: an object whose fields are known limits, each an integer from 1 to its ceiling.
 * Returns the options (only the fields set); `fail` builds the error to throw, given what is wrong.
 */
export function checkArgumentGuardOptions(
  options: unknown,
  where: string,
  fail: (message: string) => Error,
): ArgumentGuardOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw fail(`${where} must be an object of limits (${Object.keys(ARGUMENT_GUARD_CEILINGS).join(', ')}).`);
  }
  const checked: ArgumentGuardOptions = {};
  for (const [field, value] of Object.entries(options)) {
    if (!Object.hasOwn(ARGUMENT_GUARD_CEILINGS, field)) {
      throw fail(`${where}: unknown limit "${field}" (known: ${Object.keys(ARGUMENT_GUARD_CEILINGS).join(', ')}).`);
    }
    if (value === undefined) continue;
    const limit = field as keyof ArgumentGuardLimits;
    const ceiling = ARGUMENT_GUARD_CEILINGS[limit];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > ceiling) {
      throw fail(
        `${where}.${limit} must be an integer from 1 to ${ceiling} (got ${describe(value)}); leave it out for the default (${ARGUMENT_GUARD_LIMITS[limit]}).`,
      );
    }
    checked[limit] = value;
  }
  return checked;
}

/**
 * The limits of a worker: the defaults with the worker's `argumentGuard` on top.
 *
 * @throws {@link ArgumentGuardConfigError} naming the limit and its allowed range.
 */
export function resolveArgumentGuard(options: unknown): ArgumentGuardLimits {
  const checked = checkArgumentGuardOptions(
    options,
    'argumentGuard',
    (message) => new ArgumentGuardConfigError(message),
  );
  return { ...ARGUMENT_GUARD_LIMITS, ...checked };
}

/** The limits for one tool's calls: the worker's, with what the tool declared on top (already checked). */
export function toolArgumentGuard(
  worker: ArgumentGuardLimits,
  declared: ArgumentGuardOptions | undefined,
): ArgumentGuardLimits {
  if (!declared) return worker;
  const limits = { ...worker };
  for (const [field, value] of Object.entries(declared) as Array<[keyof ArgumentGuardLimits, number | undefined]>) {
    if (value !== undefined) limits[field] = value;
  }
  return limits;
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
