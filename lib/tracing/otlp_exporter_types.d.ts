// The part of @opentelemetry/exporter-trace-otlp-grpc the tracer uses. The package's own
// typings pull in @grpc/grpc-js's and so @types/node, whose globals (crypto's CryptoKey, for
// one) clash with Deno's; the etcd client declares grpc-js the same way.

import type { SpanExporter } from "@opentelemetry/sdk-trace";

export interface OTLPGRPCExporterConfigNode {
  /** `http://host:port` (insecure), `https://…`, or a `unix:` target. */
  url?: string;
  timeoutMillis?: number;
  /** A grpc-js ChannelCredentials. */
  credentials?: unknown;
}

export declare class OTLPTraceExporter implements SpanExporter {
  constructor(config?: OTLPGRPCExporterConfigNode);
  export: SpanExporter["export"];
  shutdown(): Promise<void>;
  forceFlush(): Promise<void>;
}
