/**
 * Tracing: request spans and their children, encoded as OTLP protobuf here and exported over
 * gRPC by a worker (loaded only when a `TracingConfiguration` is given), the current span
 * carried across awaits, and the W3C `traceparent` read on the way in and sent on every
 * outbound call.
 *
 * @example
 * ```ts
 * const tracer = await openTracer({ endpoint: "localhost:4317", samplingRatePerMillion: 100 }, { logger });
 * const span = tracer.startRequest("GET /api/v1/namespaces/{:namespace}/configmaps", {});
 * await withSpan(span, () => traced("Get etcd3", { key }, () => store.get(key)));
 * span.end();
 * ```
 * @module
 */

export {
  type Attributes,
  type AttributeValue,
  childSpan,
  currentSpan,
  currentTraceparent,
  injectTraceparent,
  NOOP_SPAN,
  type Span,
  traced,
  withSpan,
} from "./span.ts";
export {
  NOOP_TRACER,
  openTracer,
  type OpenTracerOptions,
  type RequestSpanOptions,
  type Tracer,
  type TracingSettings,
} from "./tracer.ts";
export { formatTraceParent, parseTraceParent, type TraceParent } from "./traceparent.ts";
export { nowMs } from "./clock.ts";
export { DEFAULT_TRACING_ENDPOINT, endpointProblem } from "./endpoint.ts";
