import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP/HTTP receiver on 127.0.0.1 for processes a test starts with `OTEL_EXPORTER_OTLP_ENDPOINT`. */
export interface OtlpReceiver {
  server: Server;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every body received at `path` (e.g. `/v1/traces`), joined by newlines. */
  bodies(path: string): string;
}

/** Starts an OTLP/HTTP receiver that keeps the body of every export request, by path, and answers 200. */
export function otlpReceiver(): Promise<OtlpReceiver> {
  const received: Array<{ path: string; body: string }> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ path: request.url ?? '', body });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        server,
        url: `http://127.0.0.1:${port}`,
        bodies: (path) =>
          received
            .filter((r) => r.path === path)
            .map((r) => r.body)
            .join('\n'),
      });
    }),
  );
}
