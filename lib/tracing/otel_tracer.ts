/**
 * The tracer over the OpenTelemetry JS SDK, as kube-apiserver sets its own up: resource
 * `service.name: apiserver` with a `service.instance.id`, a parent-based sampler whose roots
 * are sampled at `samplingRatePerMillion` / 1e6 (none when 0: then only callers' sampled
 * traces are recorded), a batch span processor with a bounded queue (past it spans are
 * dropped, so a collector that is down or slow never grows memory or holds a request), and
 * the OTLP/gRPC exporter, insecure as kube's. Each server has its own provider.
 *
 * Loaded only when tracing is configured (tracer.ts imports it dynamically).
 *
 * @module
 */

import {
  type Attributes as OtelAttributes,
  ROOT_CONTEXT,
  SpanKind,
  TraceFlags,
} from "@opentelemetry/api";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace";
import { type Resource, resourceFromAttributes } from "@opentelemetry/resources";
// @ts-types="./grpc_credentials_types.d.ts"
import * as grpc from "@grpc/grpc-js";
// @ts-types="./otlp_exporter_types.d.ts"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import type { Logger } from "../api/mod.ts";
import { type Attributes, countOpenTracer, NOOP_SPAN, type Span } from "./span.ts";
import type { OpenTracerOptions, RequestSpanOptions, Tracer, TracingSettings } from "./tracer.ts";
import type { TraceParent } from "./traceparent.ts";
import { exporterUrl } from "./endpoint.ts";
import { nowMs } from "./clock.ts";
import { spanId, traceId } from "./ids.ts";

/** kube-apiserver's `service.name`. */
export const SERVICE_NAME = "apiserver";

/** The instrumentation scope of every span. */
const SCOPE = { name: "platform-apiserver" };

export class OtelTracer implements Tracer {
  readonly enabled = true;
  readonly #processor: BatchSpanProcessor;
  readonly #resource: Resource;
  readonly #rootSampler: TraceIdRatioBasedSampler;
  #closed = false;

  constructor(settings: TracingSettings, opts: OpenTracerOptions) {
    const otlp = new OTLPTraceExporter({
      url: exporterUrl(settings.endpoint),
      // Insecure, as kube's (the exporter would take TLS for anything but http://).
      credentials: grpc.credentials.createInsecure(),
      timeoutMillis: opts.exportTimeoutMs ?? 10_000,
    });
    const exporter = new LoggedExporter(otlp, opts.logger, settings.endpoint);
    // An empty export now: the exporter loads its gRPC client (a few hundred milliseconds of
    // module loading) at start rather than in the first request that fills a batch, and a
    // collector that cannot be reached is logged at once.
    exporter.export([], () => {});
    const maxQueueSize = opts.maxQueueSize ?? 16_384;
    this.#resource = resourceFromAttributes({
      "service.name": SERVICE_NAME,
      "service.instance.id": opts.serviceInstanceId ?? `apiserver-${crypto.randomUUID()}`,
    });
    this.#rootSampler = new TraceIdRatioBasedSampler(settings.samplingRatePerMillion / 1_000_000);
    this.#processor = new BatchSpanProcessor({
      exporter,
      maxQueueSize,
      maxExportBatchSize: Math.min(2048, maxQueueSize),
      scheduledDelayMillis: 1000,
      exportTimeoutMillis: opts.exportTimeoutMs ?? 10_000,
    });
    countOpenTracer(1);
  }

  startRequest(name: string, opts: RequestSpanOptions): Span {
    if (this.#closed) return NOOP_SPAN;
    const parent = opts.parent;
    // Parent-based sampling: a caller's decision stands; a root is sampled by its trace id at
    // samplingRatePerMillion / 1e6 (the SDK's ratio sampler).
    const trace = parent?.traceId ?? traceId();
    const sampled = parent
      ? parent.sampled
      : this.#rootSampler.shouldSample(ROOT_CONTEXT, trace).decision === 2;
    // Not sampled: nothing below it is recorded either, so the request goes on untraced, at
    // no further cost.
    if (!sampled) return NOOP_SPAN;
    return new RecordedSpan(this, {
      name,
      kind: SpanKind.SERVER,
      traceId: trace,
      parent: parent && { traceId: parent.traceId, spanId: parent.spanId, isRemote: true },
      startMs: opts.startTime ?? nowMs(),
      attributes: defined(opts.attributes),
      links: opts.link ? [linkTo(opts.link)] : [],
    });
  }

  /** Hands an ended span to the batch processor (dropped when its queue is full). */
  ended(span: ReadableSpan): void {
    this.#processor.onEnd(span);
  }

  get resource(): Resource {
    return this.#resource;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    countOpenTracer(-1);
    // Whatever is queued gets one bounded try: a collector that is down does not hold the
    // shutdown.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#processor.shutdown().catch(() => {}),
      new Promise<void>((r) => timer = setTimeout(r, 5000)),
    ]);
    clearTimeout(timer);
  }
}

interface SpanStart {
  name: string;
  kind: SpanKind;
  traceId: string;
  parent?: { traceId: string; spanId: string; isRemote: boolean };
  startMs: number;
  attributes: OtelAttributes;
  links: ReadableSpan["links"];
}

/**
 * One recorded span, in the shape the SDK's batch processor and OTLP exporter read
 * (`ReadableSpan`). Made here rather than by the SDK's tracer, whose spans cost 10–30 µs each
 * on this machine (context objects, attribute copies, a sampler call, clock reconciliation):
 * a request has five or more, and the figure to meet is 70 % of the untraced throughput.
 */
class RecordedSpan implements Span, ReadableSpan {
  readonly recording = true;
  readonly name: string;
  readonly kind: SpanKind;
  readonly #context: { traceId: string; spanId: string; traceFlags: number };
  readonly parentSpanContext: ReadableSpan["parentSpanContext"];
  readonly startTime: [number, number];
  endTime: [number, number] = [0, 0];
  readonly attributes: OtelAttributes;
  readonly links: ReadableSpan["links"];
  readonly events: ReadableSpan["events"] = [];
  status: ReadableSpan["status"] = { code: 0 };
  readonly resource: Resource;
  readonly instrumentationScope = SCOPE;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  ended = false;

  constructor(readonly tracer: OtelTracer, start: SpanStart) {
    this.name = start.name;
    this.kind = start.kind;
    this.#context = { traceId: start.traceId, spanId: spanId(), traceFlags: TraceFlags.SAMPLED };
    this.parentSpanContext = start.parent &&
      { ...start.parent, traceFlags: TraceFlags.SAMPLED };
    this.startTime = hrTime(start.startMs);
    this.attributes = start.attributes;
    this.links = start.links;
    this.resource = tracer.resource;
  }

  spanContext() {
    return this.#context;
  }

  get duration(): [number, number] {
    return hrTime(
      (this.endTime[0] - this.startTime[0]) * 1000 +
        (this.endTime[1] - this.startTime[1]) / 1e6,
    );
  }

  setAttribute(key: string, value: string | number | boolean | undefined): void {
    if (value !== undefined && !this.ended) this.attributes[key] = value;
  }

  fail(message: string): void {
    this.status = { code: 2, message };
  }

  end(endTime?: number): void {
    if (this.ended) return;
    this.ended = true;
    this.endTime = hrTime(endTime ?? nowMs());
    this.tracer.ended(this);
  }

  child(name: string, attributes?: Attributes, startTime?: number): Span {
    // Work that outlived its request (a background task started in it) is not traced.
    if (this.ended) return NOOP_SPAN;
    return new RecordedSpan(this.tracer, {
      name,
      kind: SpanKind.INTERNAL,
      traceId: this.#context.traceId,
      parent: { traceId: this.#context.traceId, spanId: this.#context.spanId, isRemote: false },
      startMs: startTime ?? nowMs(),
      attributes: defined(attributes),
      links: [],
    });
  }

  traceparent(): string | undefined {
    // A stale context (a background task that outlived its request) sends none.
    if (this.ended) return undefined;
    return `00-${this.#context.traceId}-${this.#context.spanId}-01`;
  }
}

/** Milliseconds since the epoch as OTel's [seconds, nanoseconds]. */
function hrTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  let nanos = Math.round((ms - seconds * 1000) * 1e6);
  if (nanos >= 1e9) return [seconds + 1, nanos - 1e9];
  if (nanos < 0) nanos = 0;
  return [seconds, nanos];
}

function linkTo(p: TraceParent): ReadableSpan["links"][number] {
  return {
    context: {
      traceId: p.traceId,
      spanId: p.spanId,
      traceFlags: p.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    },
    attributes: {},
    droppedAttributesCount: 0,
  };
}

/** The exporter, logging when exports start failing and when they work again (not each
 * failure: a collector that is down would fill the log). */
class LoggedExporter implements SpanExporter {
  #failing = false;

  constructor(
    readonly inner: SpanExporter,
    readonly logger: Logger,
    readonly endpoint: string,
  ) {}

  export(
    spans: ReadableSpan[],
    done: (result: { code: number; error?: Error }) => void,
  ): void {
    this.inner.export(spans, (result) => {
      if (result.code !== 0 && !this.#failing) {
        this.#failing = true;
        this.logger.warn(
          `tracing: cannot export spans to ${this.endpoint} (dropping them until it answers): ` +
            (result.error?.message ?? "export failed"),
        );
      } else if (result.code === 0 && this.#failing) {
        this.#failing = false;
        this.logger.info(`tracing: exporting spans to ${this.endpoint} again`);
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

function defined(attributes: Attributes | undefined): OtelAttributes {
  const out: OtelAttributes = {};
  if (!attributes) return out;
  for (const k in attributes) if (attributes[k] !== undefined) out[k] = attributes[k];
  return out;
}
