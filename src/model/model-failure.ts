/**
 * Classification of what a model provider throws: transient (retry, after the delay the provider asked
 * for) or permanent (stop, with a hint for the operator). Works on the AI SDK's `APICallError` and on any
 * error carrying an HTTP status and headers; knows the rate-limit headers of OpenAI and Anthropic.
 */
import { ENGINE_FAILURE_TYPES } from '../contract/activity-protocol';
import { exponentialCeiling } from '../failures/backoff';
import { parseRetryAfter } from '../failures/retry-after';

/**
 * The failure types of a model call, by meaning. They are members of the protocol's closed union
 * ({@link ENGINE_FAILURE_TYPES}) and cross the wire as the `type` of an `ApplicationFailure`.
 */
export const MODEL_FAILURE_CODES = {
  /** 429: the provider's rate limit. Transient, after Retry-After or the provider's reset time. */
  rateLimited: ENGINE_FAILURE_TYPES.MODEL_RATE_LIMITED,
  /** 529 (Anthropic) or 503: the provider is overloaded. Transient. */
  overloaded: ENGINE_FAILURE_TYPES.MODEL_OVERLOADED,
  /** Other 5xx, connection refused or reset, DNS: transient. */
  unavailable: ENGINE_FAILURE_TYPES.MODEL_UNAVAILABLE,
  /** The turn's deadline passed before the provider answered; the request was aborted. Transient. */
  timeout: ENGINE_FAILURE_TYPES.MODEL_TIMEOUT,
  /** The provider answered something that is not a valid response. Transient (a few times). */
  invalidResponse: ENGINE_FAILURE_TYPES.MODEL_RESPONSE_INVALID,
  /** 400 because the prompt does not fit the model's context window. Permanent. */
  contextLength: ENGINE_FAILURE_TYPES.MODEL_CONTEXT_LENGTH_EXCEEDED,
  /** 401 / 403 / no API key. Permanent. */
  authentication: ENGINE_FAILURE_TYPES.MODEL_AUTHENTICATION_FAILED,
  /** Any other 4xx (unknown model, bad parameter). Permanent. */
  requestRejected: ENGINE_FAILURE_TYPES.MODEL_REQUEST_REJECTED,
  /** An error nobody recognises. Permanent: retrying a bug costs tokens and repeats it. */
  providerError: ENGINE_FAILURE_TYPES.MODEL_PROVIDER_ERROR,
} as const;

/** One of {@link MODEL_FAILURE_CODES}. */
export type ModelFailureCode = (typeof MODEL_FAILURE_CODES)[keyof typeof MODEL_FAILURE_CODES];

/** How model calls are retried when the provider gives no delay of its own. */
export const MODEL_RETRY = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  /** A provider asking to wait longer than this ends the call permanently instead of holding the run. */
  maxRetryAfterMs: 10 * 60_000,
} as const;

/** What {@link classifyModelError} decides. */
export interface ModelFailureClassification {
  code: ModelFailureCode;
  transient: boolean;
  /** The provider's own message, prefixed with the HTTP status when there is one. */
  message: string;
  /** What to do about it. */
  hint: string;
  statusCode?: number;
  /** The delay the provider asked for (Retry-After, retry-after-ms or its rate-limit reset headers). */
  retryAfterMs?: number;
}

/** Context of a classification. */
export interface ClassifyModelErrorOptions {
  /** Provider name of the run's settings (`openai`, `anthropic`, ...), for hints. */
  provider: string;
  nowMs?: number;
}

/** Where each configured provider reads its API key: named in authentication hints. */
export const API_KEY_VARIABLES: Readonly<Record<string, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'OPENAI_COMPATIBLE_API_KEY',
};

const CONTEXT_LENGTH_PATTERN =
  /context[_ ]length|context window|maximum context|prompt is too long|too many (input )?tokens|input is too long|reduce the length of the (messages|prompt)/i;

/**
 * Classifies a model provider's error.
 *
 * @example
 * ```ts
 * classifyModelError(apiCallErrorWith429, { provider: 'openai' });
 * // { code: 'MODEL_RATE_LIMITED', transient: true, retryAfterMs: 2000, ... }
 * ```
 */
export function classifyModelError(error: unknown, options: ClassifyModelErrorOptions): ModelFailureClassification {
  const nowMs = options.nowMs ?? Date.now();
  const details = errorDetails(error);
  const { status, message } = details;
  const said = status !== undefined ? `${options.provider} answered ${status}: ${message}` : message;
  if (details.name === 'AI_LoadAPIKeyError') return authentication(said, options.provider, status);
  if (status !== undefined) return classifyStatus(status, said, details, options.provider, nowMs);
  if (details.name === 'AbortError' || details.name === 'TimeoutError') {
    return transient(MODEL_FAILURE_CODES.timeout, said, 'The provider did not answer in time; the turn is retried.');
  }
  if (details.network || details.retryable === true) {
    return transient(MODEL_FAILURE_CODES.unavailable, said, 'The provider could not be reached; the turn is retried.');
  }
  if (
    [
      'AI_InvalidResponseDataError',
      'AI_JSONParseError',
      'AI_TypeValidationError',
      'AI_EmptyResponseBodyError',
    ].includes(details.name)
  ) {
    return transient(
      MODEL_FAILURE_CODES.invalidResponse,
      said,
      'The provider answered something that is not a valid response; the turn is retried a few times.',
    );
  }
  return {
    code: MODEL_FAILURE_CODES.providerError,
    transient: false,
    message: said,
    hint: 'The model provider failed in a way the engine does not recognise; see the message and the worker log.',
  };
}

function classifyStatus(
  status: number,
  said: string,
  details: ErrorDetails,
  provider: string,
  nowMs: number,
): ModelFailureClassification {
  const waitMs = retryAfterFromHeaders(details.headers, nowMs);
  const withWait = (c: ModelFailureClassification): ModelFailureClassification =>
    waitMs !== undefined ? { ...c, retryAfterMs: waitMs } : c;
  if (status === 429) {
    return withWait(
      transient(
        MODEL_FAILURE_CODES.rateLimited,
        said,
        'The provider rate-limited the call; it is retried when it says so.',
        status,
      ),
    );
  }
  if (status === 529 || status === 503) {
    return withWait(
      transient(MODEL_FAILURE_CODES.overloaded, said, 'The provider is overloaded; the turn is retried.', status),
    );
  }
  if (status >= 500 || status === 408 || status === 409) {
    return withWait(
      transient(MODEL_FAILURE_CODES.unavailable, said, 'The provider failed; the turn is retried.', status),
    );
  }
  if ((status === 400 || status === 413) && isContextLength(details)) {
    return {
      code: MODEL_FAILURE_CODES.contextLength,
      transient: false,
      statusCode: status,
      message: said,
      hint:
        "The transcript and the tool catalog do not fit the model's context window: use a model with a larger " +
        'context, show fewer tools (toolDisclosure), or lower maxOutputTokens.',
    };
  }
  if (status === 401 || status === 403) return authentication(said, provider, status);
  return {
    code: MODEL_FAILURE_CODES.requestRejected,
    transient: false,
    statusCode: status,
    message: said,
    hint:
      status === 404
        ? 'Check the model id and the base URL of the provider.'
        : 'The provider refused the request as malformed; check the model settings (model id, maxOutputTokens, options).',
  };
}

function authentication(said: string, provider: string, status: number | undefined): ModelFailureClassification {
  const variable = API_KEY_VARIABLES[provider] ?? 'the API key setting';
  return {
    code: MODEL_FAILURE_CODES.authentication,
    transient: false,
    ...(status !== undefined ? { statusCode: status } : {}),
    message: said,
    hint:
      status === 403
        ? `The API key in ${variable} (or DURABLE_TOOLS_MODEL_API_KEY) may not use this model or endpoint.`
        : `Set a valid API key in ${variable} (or DURABLE_TOOLS_MODEL_API_KEY) on the worker.`,
  };
}

function transient(
  code: ModelFailureCode,
  message: string,
  hint: string,
  statusCode?: number,
): ModelFailureClassification {
  return { code, transient: true, message, hint, ...(statusCode !== undefined ? { statusCode } : {}) };
}

function isContextLength(details: ErrorDetails): boolean {
  const data = details.data as { error?: { code?: unknown; type?: unknown; message?: unknown } } | undefined;
  if (data?.error?.code === 'context_length_exceeded') return true;
  if (data?.error?.type === 'request_too_large') return true;
  return CONTEXT_LENGTH_PATTERN.test(details.message) || CONTEXT_LENGTH_PATTERN.test(details.body ?? '');
}

/**
 * How long the provider asked to wait, from its response headers (names in lower case), in milliseconds:
 * `retry-after-ms`, then `Retry-After` (seconds or an HTTP-date), then the reset time of an exhausted
 * rate limit: OpenAI's `x-ratelimit-reset-requests` / `-tokens` (durations such as `6m0s`, `20ms`) and
 * Anthropic's `anthropic-ratelimit-*-reset` (RFC 3339 times). `undefined` when none is usable.
 */
export function retryAfterFromHeaders(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const retryAfter = parseRetryAfter(headers['retry-after'], nowMs);
  if (retryAfter !== undefined) return retryAfter;
  const waits: number[] = [];
  for (const kind of ['requests', 'tokens']) {
    if (headers[`x-ratelimit-remaining-${kind}`]?.trim() !== '0') continue;
    const wait = parseGoDuration(headers[`x-ratelimit-reset-${kind}`]);
    if (wait !== undefined) waits.push(wait);
  }
  for (const kind of ['requests', 'tokens', 'input-tokens', 'output-tokens']) {
    if (headers[`anthropic-ratelimit-${kind}-remaining`]?.trim() !== '0') continue;
    const at = Date.parse(headers[`anthropic-ratelimit-${kind}-reset`] ?? '');
    if (Number.isFinite(at)) waits.push(Math.max(0, at - nowMs));
  }
  return waits.length > 0 ? Math.max(...waits) : undefined;
}

/** Parses a duration like `1s`, `6m0s`, `20ms`, `1h2m3.5s` into milliseconds. */
export function parseGoDuration(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(h|ms|m|s))+$/.test(trimmed)) return undefined;
  const factors: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) {
    total += Number(match[1]) * (factors[match[2] ?? ''] ?? 0);
  }
  return Math.ceil(total);
}

/**
 * The delay before the next attempt of a transient model failure: the provider's own delay when it gave
 * one, otherwise full jitter over a capped exponential (1 s, 2 s, 4 s, ... up to 30 s).
 */
export function modelRetryDelayMs(
  classification: ModelFailureClassification,
  attempt: number,
  random: () => number = Math.random,
): number {
  if (classification.retryAfterMs !== undefined) return classification.retryAfterMs;
  const ceiling = exponentialCeiling(Math.max(1, attempt), MODEL_RETRY.initialDelayMs, MODEL_RETRY.maxDelayMs);
  return Math.max(100, Math.round(random() * ceiling));
}

interface ErrorDetails {
  name: string;
  message: string;
  status?: number;
  headers?: Record<string, string | undefined>;
  body?: string;
  data?: unknown;
  retryable?: boolean;
  network: boolean;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ConnectionRefused',
  'ConnectionClosed',
]);

/** Reads what matters from an error of any shape (AI SDK `APICallError`, fetch errors, plain objects). */
function errorDetails(error: unknown): ErrorDetails {
  const e = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(error);
  const rawStatus = e.statusCode ?? e.status;
  const status = typeof rawStatus === 'number' && Number.isInteger(rawStatus) ? rawStatus : undefined;
  return {
    name,
    message,
    ...(status !== undefined ? { status } : {}),
    ...(headersOf(e.responseHeaders ?? e.headers) ?? {}),
    ...(typeof e.responseBody === 'string' ? { body: e.responseBody } : {}),
    ...(e.data !== undefined ? { data: e.data } : {}),
    ...(typeof e.isRetryable === 'boolean' ? { retryable: e.isRetryable } : {}),
    network: isNetworkError(error, 0),
  };
}

function headersOf(value: unknown): { headers: Record<string, string | undefined> } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const headers: Record<string, string | undefined> = {};
  const entries =
    typeof (value as { entries?: unknown }).entries === 'function' && !Array.isArray(value)
      ? [...(value as { entries(): Iterable<[string, string]> }).entries()]
      : Object.entries(value as Record<string, unknown>);
  for (const [key, v] of entries) if (typeof v === 'string') headers[key.toLowerCase()] = v;
  return { headers };
}

function isNetworkError(error: unknown, depth: number): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) return true;
  return isNetworkError((error as { cause?: unknown }).cause, depth + 1);
}
