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

/** A span as OTLP/JSON carries it (ids in hex). */
export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links?: Array<{ traceId: string; spanId: string }>;
  attributes?: Array<{ key: string; value: { stringValue?: string } }>;
}

/** Every span the receiver got at `/v1/traces` (OTLP/JSON), in the order they came. */
export function receivedSpans(receiver: OtlpReceiver): ReceivedSpan[] {
  type Export = { resourceSpans?: { scopeSpans?: { spans?: ReceivedSpan[] }[] }[] };
  return receiver
    .bodies('/v1/traces')
    .split('\n')
    .filter((body) => body.trim() !== '')
    .flatMap((body) => (JSON.parse(body) as Export).resourceSpans ?? [])
    .flatMap((resource) => resource.scopeSpans ?? [])
    .flatMap((scope) => scope.spans ?? []);
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
