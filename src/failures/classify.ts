/**
 * Failure classification: turns anything a tool implementation throws into a decision the engine can
 * act on (retry or not, may it already have had an effect) and words the model can act on.
 *
 * Everything is driven by the exported tables below, read in this order for each error of the cause
 * chain, outermost first (the first error that matches a row decides):
 * 1. the taxonomy classes of `tool-errors.ts` ({@link TOOL_ERROR_CLASS_RULES}): the author's word wins;
 * 2. zod validation errors ({@link ZOD_ERROR_RULE});
 * 3. an HTTP status on `status`, `statusCode`, `response.status` or `$metadata.httpStatusCode`
 *    ({@link HTTP_CONDITIONAL_RULES}, then {@link HTTP_STATUS_RULES}, then {@link HTTP_STATUS_CLASS_RULES});
 * 4. abort and timeout errors by `name` ({@link ERROR_NAME_RULES});
 * 5. Node and undici network errors by `code` ({@link NETWORK_ERROR_CODE_RULES}, then
 *    {@link UNDICI_ERROR_DEFAULT_RULE} for any other `UND_ERR_*`).
 * Nothing matched: {@link UNKNOWN_ERROR_RULE}.
 *
 * The chain is `error.cause`, recursively, plus the members of an `AggregateError`: fetch throws
 * `TypeError('fetch failed')` with the socket error in `cause`.
 *
 * Design decisions:
 * - Unknown errors are PERMANENT `INTERNAL` and may have had an effect. Retrying an error nobody
 *   understood is how a bug (a `TypeError` in tool code) turns into repeated side effects; a tool that
 *   knows a failure is transient says so with `TransientToolError`.
 * - 5xx statuses not listed in {@link HTTP_STATUS_RULES} are transient `UNAVAILABLE` and may have had an
 *   effect (the server failed somewhere while handling the request). 501, 505, 506, 508, 510 and 511
 *   describe a configuration that will not change between attempts and are permanent.
 * - A 409 is permanent `CONFLICT` unless it says "a request with this idempotency key is still in
 *   flight" (Stripe, IETF Idempotency-Key draft): see {@link IN_FLIGHT_CONFLICT_MARKERS}.
 * - A 413 is permanent unless it carries a parseable `Retry-After`, which RFC 9110 reserves for a
 *   temporary condition.
 * - Any transient HTTP classification carries `retryAfterMs` when the response had a parseable
 *   `Retry-After` (or `retry-after-ms`); `decideRetry` then waits at least that long.
 * - `mayHaveHadEffect` is `false` only where the request provably never ran: refused connections, DNS
 *   failures, and statuses whose meaning is "not processed" (4xx, 429, 503, 408, 425).
 */
import { parseRetryAfter } from './retry-after';
import { isToolErrorCode, TOOL_ERROR_CODES, type ToolErrorCode } from '../contract/activity-protocol';
import { PermanentToolError, RateLimitedToolError, TransientToolError } from './tool-errors';

/** How the engine should treat a failure. */
export type FailureKind = 'transient' | 'permanent' | 'rate-limited';

/** The result of {@link classify}. */
export interface FailureClassification {
  kind: FailureKind;
  code: ToolErrorCode;
  /** What happened, for the model. Never a stack trace. */
  message: string;
  /** What the model should do next. */
  hint: string;
  /** How long the downstream asked to wait before the next attempt, in milliseconds. */
  retryAfterMs?: number;
  /** Whether the failed attempt may already have changed the world. */
  mayHaveHadEffect: boolean;
  /** Which table row decided, e.g. `http:503`, `network:ECONNRESET`, `unknown` (for logs and tests). */
  rule: string;
  /** The scopes a protected MCP server asked for (`MCP_INSUFFICIENT_SCOPE`). */
  missingScope?: string;
}

/** One row of the classification tables. */
export interface ClassificationRule {
  kind: FailureKind;
  code: ToolErrorCode;
  mayHaveHadEffect: boolean;
  /** What happened, in words for the model. */
  summary: string;
  /** What the model should do next. */
  hint: string;
}

/** Limits on what {@link classify} copies from an error into a message. */
export const CLASSIFY_LIMITS = {
  /** Characters of a response body or error message quoted to the model. */
  quotedChars: 200,
  /** Zod issues listed in the message. */
  zodIssues: 5,
  /** Errors visited along `cause` / `AggregateError.errors`. */
  chainLength: 16,
} as const;

const C = TOOL_ERROR_CODES;

/** Hints shared by several rows. */
export const HINTS = {
  retryLater:
    'The engine already retried this call automatically. Try again later, or continue without this tool and tell the user it is temporarily unavailable.',
  checkEffect:
    'The request reached the service but no answer came back, so it may or may not have been applied. Check the current state (for example, read the resource back) before calling again.',
  fixArguments: 'Correct the arguments according to the tool description and call again.',
  notAuthorized:
    'Do not retry: the tool is not authorised to do this. Tell the user which permission or credential is missing.',
  lookUp: 'Check the identifier; look it up with a search or list tool before calling again.',
  reportBug: 'Do not retry with the same arguments. Tell the user the tool failed; an operator has to look at it.',
  rejected:
    'Your arguments had the right format, but the service refused their content. Read what it said, then change the values (or ask the user for correct ones); do not resend the same call.',
  paymentRefused: 'Do not retry: the payment or billing was refused. Tell the user what the service said.',
  conflict:
    'The target changed or is in a state that does not allow this. Read its current state, then decide whether to call again.',
  slowDown: 'The service is rate limiting. Wait before calling again and make fewer calls.',
} as const;

/** Default hints for taxonomy errors thrown without a `hint`, by code. */
export const DEFAULT_HINTS_BY_CODE: Readonly<Record<ToolErrorCode, string>> = {
  INVALID_ARGUMENTS: HINTS.fixArguments,
  REQUEST_REJECTED: HINTS.rejected,
  UNKNOWN_TOOL: 'Use only the tools listed in the tool catalog.',
  NOT_FOUND: HINTS.lookUp,
  PERMISSION_DENIED: HINTS.notAuthorized,
  PAYMENT_REQUIRED: HINTS.paymentRefused,
  CONFLICT: HINTS.conflict,
  RATE_LIMITED: HINTS.slowDown,
  UNAVAILABLE: HINTS.retryLater,
  TIMEOUT: HINTS.checkEffect,
  INTERNAL: HINTS.reportBug,
  OUTCOME_UNKNOWN: HINTS.checkEffect,
  IDEMPOTENCY_CONFLICT: 'This step was already run with different arguments; do not repeat it with new ones.',
  INVALID_OUTPUT: HINTS.reportBug,
  TOOL_NOT_REGISTERED: HINTS.reportBug,
  CANCELLED: 'The call was cancelled; do not repeat it unless the user asks again.',
  POLICY_VIOLATION: "The run's rules refused this call; nothing was executed. Choose another step or finish.",
  LEASE_LOST: HINTS.checkEffect,
  APPROVAL_REJECTED:
    'A human rejected this call. Do not repeat it; read the reason and change the plan or ask the user.',
  APPROVAL_TIMEOUT: 'Nobody approved this call in time. Do not repeat it; tell the user it is waiting for a decision.',
  APPROVAL_MISMATCH: 'The approved call and this one differ; nothing was run. Do not repeat it.',
  APPROVAL_REQUIRED:
    'This call needs a human approval the engine has not recorded; nothing was run. Do not repeat it; ask the user to approve it.',
  SUB_AGENT_FAILED: 'The sub-agent did not finish its task. Try another way, or answer with what you know.',
  MCP_INSUFFICIENT_SCOPE:
    'Do not retry: the credentials of this MCP server lack the scope named in `missingScope`. Use another tool, or tell the user which scope an operator must grant.',
  DRY_RUN_NO_RECORD:
    'This is a dry run: calls with effects are answered only from the recorded run, which made no such call. Nothing was run.',
  INVALID_ANSWER: "Answer again with only a JSON object that matches the agent's output schema.",
  TOOL_NOT_PERMITTED:
    'This run may not call this tool (it is outside what the run was granted). Do not call it again; use the tools you were given or finish.',
};

/** The taxonomy classes of `tool-errors.ts`: kind by class name; code, message and hint come from the error. */
export const TOOL_ERROR_CLASS_RULES = {
  TransientToolError: { kind: 'transient' },
  PermanentToolError: { kind: 'permanent' },
  RateLimitedToolError: { kind: 'rate-limited' },
} as const satisfies Record<string, { kind: FailureKind }>;

/** A zod validation error thrown inside a tool (summary gets the first issues appended). */
export const ZOD_ERROR_RULE = {
  kind: 'permanent',
  code: C.INVALID_ARGUMENTS,
  mayHaveHadEffect: false,
  summary: 'The input did not pass validation.',
  hint: HINTS.fixArguments,
} as const satisfies ClassificationRule;

const transientUnavailable = (summary: string, mayHaveHadEffect: boolean): ClassificationRule => ({
  kind: 'transient',
  code: C.UNAVAILABLE,
  mayHaveHadEffect,
  summary,
  hint: mayHaveHadEffect ? HINTS.checkEffect : HINTS.retryLater,
});
const permanent = (code: ToolErrorCode, summary: string, hint: string): ClassificationRule => ({
  kind: 'permanent',
  code,
  mayHaveHadEffect: false,
  summary,
  hint,
});

/** HTTP statuses with their own row. Every other status falls to {@link HTTP_STATUS_CLASS_RULES}. */
export const HTTP_STATUS_RULES: Readonly<Record<number, ClassificationRule>> = {
  400: permanent(C.REQUEST_REJECTED, 'The service rejected the request (400 Bad Request).', HINTS.rejected),
  401: permanent(
    C.PERMISSION_DENIED,
    'The service did not accept the credentials (401 Unauthorized).',
    HINTS.notAuthorized,
  ),
  402: permanent(
    C.PAYMENT_REQUIRED,
    'The service requires payment for this (402 Payment Required).',
    HINTS.paymentRefused,
  ),
  403: permanent(C.PERMISSION_DENIED, 'The service refused the request (403 Forbidden).', HINTS.notAuthorized),
  404: permanent(C.NOT_FOUND, 'The requested resource does not exist (404 Not Found).', HINTS.lookUp),
  405: permanent(C.INTERNAL, 'The service does not allow this method here (405 Method Not Allowed).', HINTS.reportBug),
  406: permanent(C.INTERNAL, 'The service cannot produce an acceptable format (406 Not Acceptable).', HINTS.reportBug),
  407: permanent(C.PERMISSION_DENIED, 'A proxy requires authentication (407).', HINTS.notAuthorized),
  408: {
    kind: 'transient',
    code: C.TIMEOUT,
    mayHaveHadEffect: false,
    summary: 'The service timed out waiting for the request and did not process it (408 Request Timeout).',
    hint: HINTS.retryLater,
  },
  409: permanent(
    C.CONFLICT,
    'The request conflicts with the current state of the target (409 Conflict).',
    HINTS.conflict,
  ),
  410: permanent(C.NOT_FOUND, 'The resource existed but is gone for good (410 Gone).', HINTS.lookUp),
  411: permanent(C.INTERNAL, 'The service requires a Content-Length (411).', HINTS.reportBug),
  412: permanent(
    C.CONFLICT,
    'A precondition of the request no longer holds (412 Precondition Failed).',
    HINTS.conflict,
  ),
  413: permanent(
    C.INVALID_ARGUMENTS,
    'The request is too large for the service (413 Content Too Large).',
    'Send less data in one call: split the work or shorten the content.',
  ),
  414: permanent(C.INVALID_ARGUMENTS, 'The request URL is too long (414).', 'Use shorter arguments.'),
  415: permanent(C.INTERNAL, 'The service does not accept this content type (415).', HINTS.reportBug),
  416: permanent(C.INVALID_ARGUMENTS, 'The requested range cannot be served (416).', HINTS.fixArguments),
  417: permanent(C.INTERNAL, 'The service cannot meet the Expect header (417).', HINTS.reportBug),
  421: permanent(C.INTERNAL, 'The request reached the wrong server (421 Misdirected Request).', HINTS.reportBug),
  422: permanent(
    C.REQUEST_REJECTED,
    'The service understood the request but rejected its content (422 Unprocessable Content).',
    HINTS.rejected,
  ),
  423: permanent(C.CONFLICT, 'The target is locked (423 Locked).', HINTS.conflict),
  424: permanent(
    C.CONFLICT,
    'The request depended on another one that failed (424 Failed Dependency).',
    HINTS.conflict,
  ),
  425: {
    kind: 'transient',
    code: C.UNAVAILABLE,
    mayHaveHadEffect: false,
    summary: 'The service refused to process a request that might be replayed (425 Too Early).',
    hint: HINTS.retryLater,
  },
  426: permanent(C.INTERNAL, 'The service requires a protocol upgrade (426).', HINTS.reportBug),
  428: permanent(C.INTERNAL, 'The service requires a conditional request (428).', HINTS.reportBug),
  429: {
    kind: 'rate-limited',
    code: C.RATE_LIMITED,
    mayHaveHadEffect: false,
    summary: 'The service is rate limiting and did not process the request (429 Too Many Requests).',
    hint: HINTS.slowDown,
  },
  431: permanent(C.INVALID_ARGUMENTS, 'The request headers are too large (431).', HINTS.fixArguments),
  451: permanent(
    C.PERMISSION_DENIED,
    'The resource is unavailable for legal reasons (451).',
    'Do not retry; tell the user the content is legally unavailable.',
  ),
  500: {
    kind: 'transient',
    code: C.INTERNAL,
    mayHaveHadEffect: true,
    summary: 'The service failed while handling the request (500 Internal Server Error).',
    hint: HINTS.checkEffect,
  },
  501: permanent(C.INTERNAL, 'The service does not implement this operation (501 Not Implemented).', HINTS.reportBug),
  502: transientUnavailable('A gateway got a bad answer from the service behind it (502 Bad Gateway).', true),
  503: transientUnavailable('The service is temporarily unavailable and did not process the request (503).', false),
  504: {
    kind: 'transient',
    code: C.TIMEOUT,
    mayHaveHadEffect: true,
    summary:
      'A gateway timed out waiting for the service (504 Gateway Timeout); it may still have processed the request.',
    hint: HINTS.checkEffect,
  },
  505: permanent(C.INTERNAL, 'The service does not support this HTTP version (505).', HINTS.reportBug),
  506: permanent(C.INTERNAL, 'The service is misconfigured (506 Variant Also Negotiates).', HINTS.reportBug),
  508: permanent(C.INTERNAL, 'The service detected an infinite loop (508 Loop Detected).', HINTS.reportBug),
  510: permanent(C.INTERNAL, 'The service requires an extension the tool does not send (510).', HINTS.reportBug),
  511: permanent(C.PERMISSION_DENIED, 'The network requires authentication (511).', HINTS.notAuthorized),
  521: transientUnavailable('The service behind the proxy is down and refused the connection (521).', false),
  522: transientUnavailable('The proxy could not connect to the service behind it (522).', false),
  523: transientUnavailable('The service behind the proxy is unreachable (523).', false),
  524: {
    kind: 'transient',
    code: C.TIMEOUT,
    mayHaveHadEffect: true,
    summary: 'The proxy timed out waiting for the service (524); it may still have processed the request.',
    hint: HINTS.checkEffect,
  },
};

/** Rows for statuses without their own row, by class (`1xx` … `5xx`). */
export const HTTP_STATUS_CLASS_RULES = {
  '1xx': {
    kind: 'permanent',
    code: C.INTERNAL,
    mayHaveHadEffect: true,
    summary: 'The tool treated an informational HTTP response as a failure.',
    hint: HINTS.reportBug,
  },
  '2xx': {
    kind: 'permanent',
    code: C.INTERNAL,
    mayHaveHadEffect: true,
    summary: 'The service reported success, but the tool could not use the answer.',
    hint: HINTS.checkEffect,
  },
  '3xx': {
    kind: 'permanent',
    code: C.INTERNAL,
    mayHaveHadEffect: true,
    summary: 'The service answered with a redirect the tool did not follow.',
    hint: HINTS.reportBug,
  },
  '4xx': permanent(C.INTERNAL, 'The service rejected the request.', HINTS.reportBug),
  '5xx': transientUnavailable('The service failed while handling the request.', true),
} as const satisfies Record<string, ClassificationRule>;

/**
 * What marks a 409 as "a request with this idempotency key is still in flight" (transient) rather
 * than a real conflict (permanent):
 * - the response body, the error's `body` / `bodyExcerpt` / `response.data`, or its message matches
 *   `bodyPattern` ("in flight", "in-flight", "in progress", "in_progress" — Stripe says "another
 *   in-progress request using this Idempotent Key"); or
 * - the 409 carries a `Retry-After` header (the server tells the caller to come back).
 */
export const IN_FLIGHT_CONFLICT_MARKERS = {
  bodyPattern: /\bin[\s_-]?(?:flight|progress)\b/i,
  header: 'retry-after',
} as const;

/** Status rows that depend on more than the status. */
export const HTTP_CONDITIONAL_RULES = {
  /** 409 with an {@link IN_FLIGHT_CONFLICT_MARKERS} marker. */
  409: {
    kind: 'transient',
    code: C.CONFLICT,
    mayHaveHadEffect: false,
    summary: 'Another request with the same idempotency key is still being processed (409 Conflict, in flight).',
    hint: 'Wait for the earlier request to finish; the engine retries with the same key and gets its result.',
  },
  /** 413 with a parseable Retry-After: the size limit is temporary. */
  413: {
    kind: 'transient',
    code: C.UNAVAILABLE,
    mayHaveHadEffect: false,
    summary: 'The service cannot take a request this large right now (413 with Retry-After).',
    hint: HINTS.retryLater,
  },
} as const satisfies Record<number, ClassificationRule>;

/** Errors recognised by `name` (DOMException names used by fetch and AbortSignal). */
export const ERROR_NAME_RULES = {
  TimeoutError: {
    kind: 'transient',
    code: C.TIMEOUT,
    mayHaveHadEffect: true,
    summary: 'The call timed out before an answer came back.',
    hint: HINTS.checkEffect,
  },
  AbortError: {
    kind: 'transient',
    code: C.TIMEOUT,
    mayHaveHadEffect: true,
    summary: 'The call was aborted before an answer came back (usually a timeout).',
    hint: HINTS.checkEffect,
  },
} as const satisfies Record<string, ClassificationRule>;

const neverSent = (summary: string): ClassificationRule => transientUnavailable(summary, false);
const lostAnswer = (code: ToolErrorCode, summary: string): ClassificationRule => ({
  kind: 'transient',
  code,
  mayHaveHadEffect: true,
  summary,
  hint: HINTS.checkEffect,
});

/** Node (libuv / getaddrinfo) and undici network errors, by `code`. */
export const NETWORK_ERROR_CODE_RULES: Readonly<Record<string, ClassificationRule>> = {
  ECONNREFUSED: neverSent('The service refused the connection; the request was not sent.'),
  ENOTFOUND: neverSent('The service host name could not be resolved; the request was not sent.'),
  EAI_AGAIN: neverSent('Name resolution failed temporarily; the request was not sent.'),
  EHOSTUNREACH: neverSent('The service host is unreachable; the request was not sent.'),
  ENETUNREACH: neverSent('The network is unreachable; the request was not sent.'),
  ERR_SOCKET_CONNECTION_TIMEOUT: {
    ...neverSent('Connecting to the service timed out; the request was not sent.'),
    code: C.TIMEOUT,
  },
  UND_ERR_CONNECT_TIMEOUT: {
    ...neverSent('Connecting to the service timed out; the request was not sent.'),
    code: C.TIMEOUT,
  },
  ECONNRESET: lostAnswer(C.UNAVAILABLE, 'The connection was reset before the answer arrived.'),
  ECONNABORTED: lostAnswer(C.UNAVAILABLE, 'The connection was aborted before the answer arrived.'),
  EPIPE: lostAnswer(C.UNAVAILABLE, 'The connection closed while the request was being sent.'),
  ETIMEDOUT: lostAnswer(C.TIMEOUT, 'The network operation timed out.'),
  ESOCKETTIMEDOUT: lostAnswer(C.TIMEOUT, 'The socket timed out waiting for the answer.'),
  UND_ERR_HEADERS_TIMEOUT: lostAnswer(C.TIMEOUT, 'The service did not send response headers in time.'),
  UND_ERR_BODY_TIMEOUT: lostAnswer(C.TIMEOUT, 'The service stopped sending the response body.'),
  UND_ERR_SOCKET: lostAnswer(C.UNAVAILABLE, 'The connection failed while the request was in flight.'),
};

/** Any other `UND_ERR_*` code: undici failed somewhere in the exchange, outcome unknown. */
export const UNDICI_ERROR_DEFAULT_RULE = lostAnswer(C.UNAVAILABLE, 'The HTTP client failed during the request.');

/** Prefix of undici error codes. */
export const UNDICI_ERROR_CODE_PREFIX = 'UND_ERR_';

/** Anything no other table recognises (see the module notes for why it is permanent). */
export const UNKNOWN_ERROR_RULE = {
  kind: 'permanent',
  code: C.INTERNAL,
  mayHaveHadEffect: true,
  summary: 'The tool failed with an unexpected error.',
  hint: HINTS.reportBug,
} as const satisfies ClassificationRule;

/**
 * Classifies anything a tool threw. Never throws, never returns a stack trace.
 *
 * @example
 * ```ts
 * classify(new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }));
 * // { kind: 'transient', code: 'UNAVAILABLE', mayHaveHadEffect: true, rule: 'network:ECONNRESET', ... }
 * classify(await httpErrorFromResponse(res429)); // { kind: 'rate-limited', retryAfterMs: 2000, ... }
 * ```
 */
export function classify(error: unknown, nowMs: number = Date.now()): FailureClassification {
  for (const node of causeChain(error)) {
    const found = classifyOne(node, nowMs);
    if (found) return found;
  }
  const description = describeUnknown(error);
  return fromRule(
    UNKNOWN_ERROR_RULE,
    'unknown',
    description ? `${UNKNOWN_ERROR_RULE.summary} ${description}` : undefined,
  );
}

function classifyOne(node: unknown, nowMs: number): FailureClassification | undefined {
  if (
    node instanceof TransientToolError ||
    node instanceof PermanentToolError ||
    node instanceof RateLimitedToolError
  ) {
    const rule = TOOL_ERROR_CLASS_RULES[node.name];
    // Own properties only: a JS caller may pass any string as `code` (even "constructor").
    const code = isToolErrorCode(node.code) ? node.code : C.INTERNAL;
    const classification: FailureClassification = {
      kind: rule.kind,
      code,
      message: node.message,
      hint: node.hint ?? DEFAULT_HINTS_BY_CODE[code],
      mayHaveHadEffect: node.mayHaveHadEffect,
      rule: `class:${node.name}`,
    };
    if (node instanceof RateLimitedToolError && node.retryAfterMs !== undefined) {
      classification.retryAfterMs = node.retryAfterMs;
    }
    if (node instanceof PermanentToolError && node.missingScope !== undefined) {
      classification.missingScope = node.missingScope;
    }
    return classification;
  }
  if (!isObject(node)) return undefined;

  if (isZodError(node)) {
    const issues = node.issues.slice(0, CLASSIFY_LIMITS.zodIssues).map(formatZodIssue);
    const more = node.issues.length > issues.length ? ` (and ${node.issues.length - issues.length} more)` : '';
    return fromRule(ZOD_ERROR_RULE, 'zod', `${ZOD_ERROR_RULE.summary} ${issues.join('; ')}${more}.`);
  }

  const status = httpStatusOf(node);
  if (status !== undefined) return classifyHttp(node, status, nowMs);

  const name = node['name'];
  if (typeof name === 'string' && Object.hasOwn(ERROR_NAME_RULES, name)) {
    return fromRule(ERROR_NAME_RULES[name as keyof typeof ERROR_NAME_RULES], `name:${name}`);
  }

  const code = node['code'];
  if (typeof code === 'string') {
    const rule = Object.hasOwn(NETWORK_ERROR_CODE_RULES, code) ? NETWORK_ERROR_CODE_RULES[code] : undefined;
    if (rule) return fromRule(rule, `network:${code}`, `Network error ${code}: ${rule.summary}`);
    if (code.startsWith(UNDICI_ERROR_CODE_PREFIX)) {
      return fromRule(
        UNDICI_ERROR_DEFAULT_RULE,
        `network:${UNDICI_ERROR_CODE_PREFIX}*`,
        `Network error ${code}: ${UNDICI_ERROR_DEFAULT_RULE.summary}`,
      );
    }
  }
  return undefined;
}

function classifyHttp(node: Record<string, unknown>, status: number, nowMs: number): FailureClassification {
  const headers = headersOf(node);
  const retryAfterMs = retryAfterOf(node, headers, nowMs);
  const body = bodyTextOf(node);

  let rule: ClassificationRule;
  let ruleName: string;
  if (
    status === 409 &&
    (headers(IN_FLIGHT_CONFLICT_MARKERS.header) !== undefined ||
      IN_FLIGHT_CONFLICT_MARKERS.bodyPattern.test(`${body} ${messageOf(node)}`))
  ) {
    rule = HTTP_CONDITIONAL_RULES[409];
    ruleName = 'http:409-in-flight';
  } else if (status === 413 && retryAfterMs !== undefined) {
    rule = HTTP_CONDITIONAL_RULES[413];
    ruleName = 'http:413-retry-after';
  } else if (Object.hasOwn(HTTP_STATUS_RULES, status)) {
    rule = HTTP_STATUS_RULES[status]!;
    ruleName = `http:${status}`;
  } else {
    const statusClass = `${Math.floor(status / 100)}xx` as keyof typeof HTTP_STATUS_CLASS_RULES;
    rule = HTTP_STATUS_CLASS_RULES[statusClass];
    ruleName = `http:${statusClass}`;
  }

  const quoted = quote(body);
  // The tool's own words (e.g. "Card declined: insufficient funds") come first, the classification after.
  const own = ownMessageOf(node, status);
  const message = `${own ? `${own} ` : ''}The service answered HTTP ${status}. ${rule.summary}${quoted ? ` It said: ${quoted}` : ''}`;
  const classification = fromRule(rule, ruleName, message);
  if (rule.kind !== 'permanent' && retryAfterMs !== undefined) classification.retryAfterMs = retryAfterMs;
  return classification;
}

function fromRule(rule: ClassificationRule, ruleName: string, message?: string): FailureClassification {
  return {
    kind: rule.kind,
    code: rule.code,
    message: message ?? rule.summary,
    hint: rule.hint,
    mayHaveHadEffect: rule.mayHaveHadEffect,
    rule: ruleName,
  };
}

/** The error, then its causes and aggregated errors, depth first, without cycles. */
function* causeChain(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  const stack: unknown[] = [error];
  while (stack.length > 0 && seen.size < CLASSIFY_LIMITS.chainLength) {
    const node = stack.pop();
    if (node === undefined || node === null || seen.has(node)) continue;
    seen.add(node);
    yield node;
    if (!isObject(node)) continue;
    const children: unknown[] = [];
    if (Array.isArray(node['errors'])) children.push(...(node['errors'] as unknown[]));
    if ('cause' in node) children.push(node['cause']);
    // Stack order: visit `errors` in their order, then `cause`.
    stack.push(...children.reverse());
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

function isZodError(node: Record<string, unknown>): node is Record<string, unknown> & { issues: ZodIssueLike[] } {
  return (node['name'] === 'ZodError' || node['name'] === '$ZodError') && Array.isArray(node['issues']);
}

interface ZodIssueLike {
  path?: ReadonlyArray<PropertyKey>;
  message?: string;
}

function formatZodIssue(issue: ZodIssueLike): string {
  const path = (issue.path ?? []).map(String).join('.') || '(root)';
  return `${path}: ${issue.message ?? 'invalid'}`;
}

function toStatus(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

function httpStatusOf(node: Record<string, unknown>): number | undefined {
  const response = node['response'];
  const metadata = node['$metadata'];
  return (
    toStatus(node['status']) ??
    toStatus(node['statusCode']) ??
    (isObject(response) ? toStatus(response['status']) : undefined) ??
    (isObject(metadata) ? toStatus(metadata['httpStatusCode']) : undefined)
  );
}

/** A case-insensitive header reader over `headers` or `response.headers` (Headers, Map-like or plain object). */
function headersOf(node: Record<string, unknown>): (name: string) => string | undefined {
  const response = node['response'];
  const sources = [node['headers'], isObject(response) ? response['headers'] : undefined].filter(isObject);
  return (name) => {
    for (const source of sources) {
      const value =
        typeof source['get'] === 'function'
          ? (source['get'] as (n: string) => unknown).call(source, name)
          : Object.entries(source).find(([key]) => key.toLowerCase() === name)?.[1];
      const text = Array.isArray(value) ? value[0] : value;
      if (typeof text === 'string') return text;
      if (typeof text === 'number') return String(text);
    }
    return undefined;
  };
}

function retryAfterOf(
  node: Record<string, unknown>,
  headers: (name: string) => string | undefined,
  nowMs: number,
): number | undefined {
  const ms = headers('retry-after-ms');
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms);
  const raw = typeof node['retryAfter'] === 'string' ? node['retryAfter'] : headers('retry-after');
  return parseRetryAfter(raw, nowMs);
}

function bodyTextOf(node: Record<string, unknown>): string {
  const response = node['response'];
  const candidates = [node['bodyExcerpt'], node['body'], isObject(response) ? response['data'] : undefined];
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate;
    if (isObject(candidate)) {
      try {
        return JSON.stringify(candidate);
      } catch {
        // Circular or exotic: ignore.
      }
    }
  }
  return '';
}

/** The error's own message, unless it is only the generic status line of an {@link HttpStatusError}. */
function ownMessageOf(node: Record<string, unknown>, status: number): string {
  const flat = messageOf(node).replace(/\s+/g, ' ').trim();
  if (flat === '' || flat.startsWith(`HTTP ${status}`)) return '';
  const cut = flat.length > CLASSIFY_LIMITS.quotedChars ? `${flat.slice(0, CLASSIFY_LIMITS.quotedChars)}…` : flat;
  return /[.!?…]$/.test(cut) ? cut : `${cut}.`;
}

function messageOf(node: Record<string, unknown>): string {
  return typeof node['message'] === 'string' ? node['message'] : '';
}

/** First line, whitespace collapsed, cut to {@link CLASSIFY_LIMITS.quotedChars}, in double quotes. */
function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '';
  const cut = flat.length > CLASSIFY_LIMITS.quotedChars ? `${flat.slice(0, CLASSIFY_LIMITS.quotedChars)}…` : flat;
  return `"${cut}"`;
}

function describeUnknown(error: unknown): string {
  if (typeof error === 'string') return quote(error.split('\n')[0] ?? '');
  if (!isObject(error)) return '';
  const name = typeof error['name'] === 'string' ? error['name'] : '';
  const firstLine = messageOf(error).split('\n')[0] ?? '';
  const quoted = quote(firstLine);
  if (!name && !quoted) return '';
  return `${name || 'Error'}${quoted ? `: ${quoted}` : ''}.`;
}
