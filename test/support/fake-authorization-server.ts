import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** One token request the fake authorization server received. */
export interface TokenRequest {
  params: URLSearchParams;
  authorization: string | null;
}

/** An in-memory authorization server, reached through the fetch it returns (no sockets). */
export interface FakeAuthorizationServer {
  readonly issuer: string;
  /** The fetch to give the code under test: answers the metadata and token endpoints, else `mcp` when set. */
  readonly fetch: FetchLike;
  /** Every token request so far. */
  readonly tokenRequests: TokenRequest[];
  /** Every URL fetched so far, in order. */
  readonly fetched: string[];
  /** The access tokens issued so far, in order (`token-1`, `token-2`, ...). */
  readonly issued: string[];
  /** Token requests wait for this promise from now on (to hold a renewal in flight). */
  hold(until: Promise<void>): void;
  /** Answers token requests with this OAuth error from now on. */
  refuse(error: { status: number; error: string; description?: string } | undefined): void;
}

/**
 * A fake authorization server at `issuer` publishing RFC 8414 metadata whose `issuer` is `claimedIssuer` (the
 * same by default), issuing `token-<n>` access tokens valid `expiresIn` seconds, and `refresh-<n>` refresh tokens
 * when `rotateRefreshTokens`. Requests to other URLs go to `mcp` (a 404 without it).
 */
export function fakeAuthorizationServer(
  options: {
    issuer?: string;
    claimedIssuer?: string;
    expiresIn?: number;
    rotateRefreshTokens?: boolean;
    mcp?: (url: URL, init: RequestInit | undefined) => Response | Promise<Response>;
  } = {},
): FakeAuthorizationServer {
  const issuer = options.issuer ?? 'https://auth.example.test';
  const tokenRequests: TokenRequest[] = [];
  const fetched: string[] = [];
  const issued: string[] = [];
  let holding: Promise<void> | undefined;
  let refusal: { status: number; error: string; description?: string } | undefined;
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(String(input));
    fetched.push(url.href);
    if (url.origin === new URL(issuer).origin && url.pathname === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: options.claimedIssuer ?? issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['client_credentials', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    }
    if (url.href === `${issuer}/token`) {
      const params = new URLSearchParams(String(init?.body ?? ''));
      tokenRequests.push({ params, authorization: new Headers(init?.headers).get('authorization') });
      if (holding) await holding;
      if (refusal) {
        return json(refusal.status, {
          error: refusal.error,
          ...(refusal.description ? { error_description: refusal.description } : {}),
        });
      }
      const accessToken = `token-${issued.length + 1}`;
      issued.push(accessToken);
      return json(200, {
        access_token: accessToken,
        token_type: 'Bearer',
        ...(options.expiresIn !== undefined ? { expires_in: options.expiresIn } : {}),
        ...(options.rotateRefreshTokens ? { refresh_token: `refresh-${issued.length}` } : {}),
      });
    }
    if (options.mcp && url.origin !== new URL(issuer).origin) return options.mcp(url, init);
    return new Response('not found', { status: 404 });
  };
  return {
    issuer,
    fetch,
    tokenRequests,
    fetched,
    issued,
    hold: (until) => {
      holding = until;
    },
    refuse: (error) => {
      refusal = error;
    },
  };
}
