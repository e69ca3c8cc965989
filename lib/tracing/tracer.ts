/**
 * A server's tracer: where request spans start. One per server (several servers may run in
 * one process, each with its own collector); the spans below a request's span come from it
 * through the current span (span.ts), not from the tracer.
 *
 * @module
 */

import type { Logger } from "../api/mod.ts";
import { type Attributes, NOOP_SPAN, type Span } from "./span.ts";
import type { TraceParent } from "./traceparent.ts";

/** What starts a request's span. */
export interface RequestSpanOptions {
  /** When the request arrived (ms since the epoch, fractional). @default now */
  startTime?: number;
  /** The caller's span: the request's span continues its trace (a trusted caller's). */
  parent?: TraceParent;
  /** A caller's span not trusted as parent: linked to, as kube links a public endpoint's. */
  link?: TraceParent;
  attributes?: Attributes;
}

export interface Tracer {
  /** False for the no-op tracer: the server leaves tracing out of the request path. */
  readonly enabled: boolean;
  /** A request's span (kind SERVER); the no-op span when the request is not sampled. */
  startRequest(name: string, opts: RequestSpanOptions): Span;
  /** Exports what is queued (bounded by a timeout) and stops exporting. */
  close(): Promise<void>;
}

/** Tracing off: no exporter loaded, no span made. */
export const NOOP_TRACER: Tracer = {
  enabled: false,
  startRequest: () => NOOP_SPAN,
  close: () => Promise.resolve(),
};

/** A validated `TracingConfiguration` (lib/config), as the tracer takes it. */
export interface TracingSettings {
  /** The collector's gRPC address: `host:port`, `dns:///host:port`, `unix:///path`. */
  endpoint: string;
  /** Spans sampled per million traces started here; callers' sampled traces are kept. */
  samplingRatePerMillion: number;
}

/** Options of {@link openTracer}. */
export interface OpenTracerOptions {
  logger: Logger;
  /** The resource's `service.instance.id`. @default `apiserver-<random uuid>` */
  serviceInstanceId?: string;
  /** Spans kept for export at most encoded and not yet sent at most (past it new ones are dropped). @default 16384 */
  maxQueueSize?: number;
  /** How long one export may take. @default 10000 */
  exportTimeoutMs?: number;
}

/**
 * The tracer for `settings`: the no-op tracer when absent (the exporter is not even loaded),
 * else one exporting OTLP over gRPC through a bounded batch queue.
 */
export async function openTracer(
  settings: TracingSettings | undefined,
  opts: OpenTracerOptions,
): Promise<Tracer> {
  if (!settings) return NOOP_TRACER;
  const { OtelTracer } = await import("./otel_tracer.ts");
  return new OtelTracer(settings, opts);
}
