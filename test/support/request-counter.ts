import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { closeHttpServer, listenOnFreePort } from './local-server';

/**
 * A self-signed certificate for 127.0.0.1 (EC P-256, valid for 100 years), for tests of HTTPS clients
 * against a local server (`rejectUnauthorized: false`). Test-only: never trust it anywhere else.
 */
export const TEST_TLS = {
  key: `
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgraQD10Qz6JMJelzI
v2hYIj67NcUQIZEcRlGEF2M6mxyhRANCAATIVJ6Pk25pZk8B4ucFa52nDlhD8It8
LXuXR1lbSE0e3v+9rY+GWHlosOI+cMrkBPjshIDPmTqMXjWN4EJiLsI3
-----END PRIVATE KEY-----
`,
  cert: `
-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUM0/NpsVd4t0zQRw0SFN8ZsAqMDUwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwMTE0NTg1NloYDzIxMjYxMTA3
MTQ1ODU2WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATIVJ6Pk25pZk8B4ucFa52nDlhD8It8LXuXR1lbSE0e3v+9rY+GWHlo
sOI+cMrkBPjshIDPmTqMXjWN4EJiLsI3o2QwYjAdBgNVHQ4EFgQUF+p0ENWorFP5
JJIlQxROGXvRn5wwHwYDVR0jBBgwFoAUF+p0ENWorFP5JJIlQxROGXvRn5wwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IQC2BMPzCLvD7SSXVGt7Uu6XcGpQcCb5lLZoz4ykBPPT1wIgdP4LchtFdtSD+qQj
SR4RPnjBqTMB3K2Vs4+fyAKXZv8=
-----END CERTIFICATE-----
`,
} as const;

/** A running {@link startRequestCounter}. */
export interface RequestCounter {
  /** `http://127.0.0.1:<port>` or `https://…` */
  url: string;
  /** Paths of the requests received so far (headers parsed), in arrival order. */
  paths: string[];
  /** Resolves the next time a request with `path` arrives (or at once if one already did). */
  arrived(path: string): Promise<void>;
  /** Lets the held answers go (see `holdAnswers`). */
  release(): void;
  close(): Promise<void>;
}

/**
 * Starts an HTTP or HTTPS server on 127.0.0.1 (a free port) that records the path of every request it
 * receives and answers 200 `ok` once the body is read. With `holdAnswers` (true, or true for the paths
 * to hold), those answers wait for `release()`: a test can change something while a request is in flight.
 */
export async function startRequestCounter(
  options: { tls?: boolean; holdAnswers?: boolean | ((path: string) => boolean) } = {},
): Promise<RequestCounter> {
  const paths: string[] = [];
  const waiters: Array<{ path: string; resolve: () => void }> = [];
  let released = false;
  const { holdAnswers = false } = options;
  const holds = (path: string): boolean =>
    !released && (typeof holdAnswers === 'function' ? holdAnswers(path) : holdAnswers);
  const held: Array<() => void> = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? '/';
    paths.push(path);
    for (const waiter of waiters.filter((w) => w.path === path)) waiter.resolve();
    req.resume();
    req.on('end', () => {
      const answer = () => res.end('ok');
      if (holds(path)) held.push(answer);
      else answer();
    });
  };
  const server = options.tls
    ? createHttpsServer({ key: TEST_TLS.key, cert: TEST_TLS.cert }, handler)
    : createHttpServer(handler);
  const port = await listenOnFreePort(server);
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    paths,
    arrived: (path) =>
      paths.includes(path) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ path, resolve })),
    release: () => {
      released = true;
      for (const answer of held.splice(0)) answer();
    },
    close: () => closeHttpServer(server),
  };
}
