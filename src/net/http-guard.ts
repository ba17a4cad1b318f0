import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * Checks shared by the local HTTP servers (MCP over Streamable HTTP, the codec server): is an interface loopback, is a
 * `Host` header this server's (DNS-rebinding protection), is an `Authorization` header a bearer token.
 */

/** Whether binding `host` keeps the server reachable from this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare.startsWith('::ffff:127.');
}

/**
 * Whether a request's `Host` header names this server: `127.0.0.1`, `localhost` or `[::1]` with the port, the bound
 * interface with the port, or one of `allowedHosts` (`name:port`, e.g. a proxy's, or a bare `name`, meaning that name
 * with the server's port). A page on `evil.example` that rebinds its DNS name to 127.0.0.1 sends
 * `Host: evil.example` and is refused.
 */
export function isAllowedHostHeader(
  header: string | undefined,
  server: { port: number; host: string; allowedHosts?: readonly string[] },
): boolean {
  if (!header) return false;
  const bound = server.host.includes(':') && !server.host.startsWith('[') ? `[${server.host}]` : server.host;
  const hosts = new Set(
    [
      `127.0.0.1:${server.port}`,
      `localhost:${server.port}`,
      `[::1]:${server.port}`,
      `${bound}:${server.port}`,
      ...(server.allowedHosts ?? []).map((h) => (/:\d+$/.test(h) ? h : `${h}:${server.port}`)),
    ].map((h) => h.toLowerCase()),
  );
  return hosts.has(header.toLowerCase());
}

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750), or undefined for anything else. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+)$/i.exec(header ?? '');
  return match ? match[1] : undefined;
}

/** Compares two secrets in constant time (for equal lengths). */
export function sameSecret(given: string, wanted: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(wanted, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
