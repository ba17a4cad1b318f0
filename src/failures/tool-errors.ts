/**
 * The errors tool authors throw to say how a failure should be treated. `classify` reads them first,
 * before any heuristic, so an explicit error always wins over guessing.
 */
import { TOOL_ERROR_CODES, type ToolErrorCode } from '../contract/activity-protocol';
import { DurableToolsError } from '../contract/durable-tools-error';

/** Limits of what {@link httpErrorFromResponse} keeps from a response. */
export const HTTP_ERROR_LIMITS = {
  /** Characters of the response body kept in {@link HttpStatusError.bodyExcerpt}. */
  bodyExcerptChars: 500,
} as const;

/** Options shared by the three taxonomy errors. */
export interface ToolErrorOptions {
  /** What the model should do next, e.g. "call `search_hotels` first to get a valid id". */
  hint?: string;
  /** The underlying error, kept for logs; never shown to the model. */
  cause?: unknown;
  /**
   * Whether the failed attempt may already have changed the world (the request reached the
   * downstream and the engine cannot tell if it was applied). A call that may have had an effect is
   * retried only when the tool is idempotent downstream. Defaults to `false` for the three taxonomy
   * errors: by throwing one, the author states what happened.
   */
  mayHaveHadEffect?: boolean;
}

/**
 * A failure that may go away on its own: the engine retries it with jittered backoff.
 *
 * @example
 * ```ts
 * throw new TransientToolError('The booking service is restarting.', { code: 'UNAVAILABLE' });
 * ```
 */
export class TransientToolError extends DurableToolsError<ToolErrorCode> {
  override readonly name = 'TransientToolError';
  readonly hint: string | undefined;
  readonly mayHaveHadEffect: boolean;
  /** @param options `code`: one of {@link TOOL_ERROR_CODES}, `UNAVAILABLE` unless given. */
  constructor(message: string, options: ToolErrorOptions & { code?: ToolErrorCode } = {}) {
    super(message, options.code ?? TOOL_ERROR_CODES.UNAVAILABLE, { cause: options.cause });
    this.hint = options.hint;
    this.mayHaveHadEffect = options.mayHaveHadEffect ?? false;
  }
}

/**
 * A failure that will happen again with the same arguments (validation, permission, business rule):
 * never retried; the model sees `message` and `hint` and may correct itself.
 *
 * @example
 * ```ts
 * throw new PermanentToolError('Hotel 42 does not exist.', {
 *   code: 'NOT_FOUND',
 *   hint: 'Call search_hotels to get a valid hotel id.',
 * });
 * ```
 */
export class PermanentToolError extends DurableToolsError<ToolErrorCode> {
  override readonly name = 'PermanentToolError';
  readonly hint: string | undefined;
  readonly mayHaveHadEffect: boolean;
  /** The scopes a protected server asked for (`MCP_INSUFFICIENT_SCOPE`), space-separated; in the observation. */
  readonly missingScope: string | undefined;
  /**
   * @param options `code`: one of {@link TOOL_ERROR_CODES}, `INTERNAL` unless given; `missingScope`: see
   * {@link PermanentToolError.missingScope}.
   */
  constructor(message: string, options: ToolErrorOptions & { code?: ToolErrorCode; missingScope?: string } = {}) {
    super(message, options.code ?? TOOL_ERROR_CODES.INTERNAL, { cause: options.cause });
    this.hint = options.hint;
    this.mayHaveHadEffect = options.mayHaveHadEffect ?? false;
    this.missingScope = options.missingScope;
  }
}

/**
 * The downstream asked the caller to slow down. Retried, no earlier than `retryAfterMs` when given.
 * Its code is always `RATE_LIMITED`.
 *
 * @example
 * ```ts
 * throw new RateLimitedToolError('Search quota exceeded.', { retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) });
 * ```
 */
export class RateLimitedToolError extends DurableToolsError<typeof TOOL_ERROR_CODES.RATE_LIMITED> {
  override readonly name = 'RateLimitedToolError';
  /** How long the downstream asked to wait, in milliseconds; `undefined` means "use backoff". */
  readonly retryAfterMs: number | undefined;
  readonly hint: string | undefined;
  readonly mayHaveHadEffect: boolean;
  constructor(message: string, options: ToolErrorOptions & { retryAfterMs?: number } = {}) {
    super(message, TOOL_ERROR_CODES.RATE_LIMITED, { cause: options.cause });
    const { retryAfterMs } = options;
    this.retryAfterMs =
      retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined;
    this.hint = options.hint;
    this.mayHaveHadEffect = options.mayHaveHadEffect ?? false;
  }
}

/** Any of the three taxonomy errors. */
export type ToolError = TransientToolError | PermanentToolError | RateLimitedToolError;

/**
 * An HTTP response with a non-2xx status, as an error `classify` understands (it reads `status`,
 * `headers` and `bodyExcerpt`). Headers are kept with lower-case names. Its `code` is always `HTTP_STATUS`.
 */
export class HttpStatusError extends DurableToolsError<'HTTP_STATUS'> {
  override readonly name = 'HttpStatusError';
  readonly status: number;
  readonly statusText: string;
  /** Response headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The raw `Retry-After` header, if the response had one. */
  readonly retryAfter: string | undefined;
  /** The first {@link HTTP_ERROR_LIMITS.bodyExcerptChars} characters of the body. */
  readonly bodyExcerpt: string;
  readonly url: string | undefined;
  constructor(
    status: number,
    options: {
      statusText?: string;
      headers?: Record<string, string>;
      bodyExcerpt?: string;
      url?: string;
      cause?: unknown;
    } = {},
  ) {
    const statusText = options.statusText ?? '';
    // The message reaches the model, the run's history and logs: the URL without credentials or query (an API key
    // often travels in one), which stay on `url` for the tool's own code.
    const from = options.url ? ` from ${urlWithoutSecrets(options.url)}` : '';
    super(`HTTP ${status}${statusText ? ` ${statusText}` : ''}${from}`, 'HTTP_STATUS', {
      cause: options.cause,
    });
    this.status = status;
    this.statusText = statusText;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    this.headers = headers;
    this.retryAfter = headers['retry-after'];
    this.bodyExcerpt = (options.bodyExcerpt ?? '').slice(0, HTTP_ERROR_LIMITS.bodyExcerptChars);
    this.url = options.url;
  }
}

/** A URL without its user info, query and fragment (`?…` kept as a marker); text that is no URL is cut at `?`. */
function urlWithoutSecrets(url: string): string {
  try {
    const parsed = new URL(url);
    const hadQuery = parsed.search !== '';
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return `${parsed.toString()}${hadQuery ? '?…' : ''}`;
  } catch {
    const cut = url.search(/[?#]/);
    return cut < 0 ? url : `${url.slice(0, cut)}?…`;
  }
}

/**
 * Builds an {@link HttpStatusError} from a fetch `Response`, reading (and consuming) at most the first
 * {@link HTTP_ERROR_LIMITS.bodyExcerptChars} characters of its body. A body that cannot be read gives
 * an empty excerpt.
 *
 * @example
 * ```ts
 * const res = await fetch(url, { method: 'POST', body });
 * if (!res.ok) throw await httpErrorFromResponse(res);
 * ```
 */
export async function httpErrorFromResponse(response: Response): Promise<HttpStatusError> {
  let bodyExcerpt = '';
  try {
    bodyExcerpt = (await response.text()).slice(0, HTTP_ERROR_LIMITS.bodyExcerptChars);
  } catch {
    // Body already consumed or the stream broke: the status alone still classifies the failure.
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return new HttpStatusError(response.status, {
    statusText: response.statusText,
    headers,
    bodyExcerpt,
    url: response.url || undefined,
  });
}

/**
 * Returns the response unchanged when its status is 2xx, and throws an {@link HttpStatusError} otherwise,
 * so tool code using fetch fails in a way `classify` understands.
 *
 * @example
 * ```ts
 * const res = await throwForHttpStatus(await fetch(url, { signal: ctx.signal }));
 * return (await res.json()) as Booking;
 * ```
 */
export async function throwForHttpStatus(response: Response): Promise<Response> {
  if (response.ok) return response;
  throw await httpErrorFromResponse(response);
}
