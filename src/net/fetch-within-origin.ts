import { DurableToolsError } from '../contract/durable-tools-error';

/** A fetch function (the global `fetch`, or one given for tests). */
export type FetchFunction = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** How many redirects within the origin are followed at most. */
const MAX_REDIRECTS = 5;

/** A redirect that would leave the origin of the request: refused, never followed. */
export class CrossOriginRedirectError extends DurableToolsError<'CROSS_ORIGIN_REDIRECT'> {
  override readonly name = 'CrossOriginRedirectError';
  /** The origin the redirect pointed to (scheme, host and port only: no path, query or credentials). */
  readonly target: string;
  constructor(from: URL, target: URL) {
    super(
      `${from.origin} redirected to another origin (${target.origin}); the redirect was not followed.`,
      'CROSS_ORIGIN_REDIRECT',
    );
    this.target = target.origin;
  }
}

/**
 * Fetches `url` following redirects only while they stay within its origin (same scheme, host and port), at most 5;
 * a redirect to another origin throws {@link CrossOriginRedirectError} before anything is asked of that origin. For
 * discovery documents and keys of an authorization server: a redirect must never make another host's metadata
 * or keys ours. Only GET and HEAD requests are meant (the body of a request is not sent again).
 */
export async function fetchWithinOrigin(
  url: string | URL,
  init: RequestInit = {},
  base: FetchFunction = (target, options) => fetch(target, options),
): Promise<Response> {
  const origin = new URL(url);
  let current = origin;
  for (let followed = 0; ; followed += 1) {
    const response = await base(current, { ...init, redirect: 'manual' });
    const location = isRedirect(response.status) ? response.headers.get('location') : null;
    const target = location !== null && URL.canParse(location, current.href) ? new URL(location, current) : undefined;
    if (!target || followed === MAX_REDIRECTS) return response;
    await response.body?.cancel().catch(() => undefined);
    if (target.origin !== origin.origin || target.username !== '' || target.password !== '') {
      throw new CrossOriginRedirectError(origin, target);
    }
    current = target;
  }
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}
