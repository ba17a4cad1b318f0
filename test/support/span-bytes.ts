import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** The size of spans as an OTLP exporter sends them: one export request, protobuf and JSON encodings. */
export interface SpanBytes {
  spans: number;
  protobuf: number;
  json: number;
}

/** Measures `spans` encoded as one OTLP/HTTP export request body (`http/protobuf` and `http/json`). */
export function spanBytes(spans: ReadableSpan[]): SpanBytes {
  return {
    spans: spans.length,
    protobuf: ProtobufTraceSerializer.serializeRequest(spans)?.byteLength ?? 0,
    json: JsonTraceSerializer.serializeRequest(spans)?.byteLength ?? 0,
  };
}
