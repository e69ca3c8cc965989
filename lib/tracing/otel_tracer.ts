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
  type Context,
  ROOT_CONTEXT,
  type Span as OtelSpanApi,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Tracer as OtelTracerApi,
} from "@opentelemetry/api";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { resourceFromAttributes } from "@opentelemetry/resources";
// @ts-types="./grpc_credentials_types.d.ts"
import * as grpc from "@grpc/grpc-js";
// @ts-types="./otlp_exporter_types.d.ts"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import type { Logger } from "../api/mod.ts";
import { type Attributes, countOpenTracer, NOOP_SPAN, type Span } from "./span.ts";
import type { OpenTracerOptions, RequestSpanOptions, Tracer, TracingSettings } from "./tracer.ts";
import type { TraceParent } from "./traceparent.ts";
import { exporterUrl } from "./endpoint.ts";
// Every span's times come from this one clock: the SDK's own anchors each span to Date.now()
// (whole milliseconds), which can put a child a fraction of a millisecond outside its parent.
import { nowMs } from "./clock.ts";

/** kube-apiserver's `service.name`. */
export const SERVICE_NAME = "apiserver";

export class OtelTracer implements Tracer {
  readonly enabled = true;
  readonly #provider: TracerProvider;
  readonly #tracer: OtelTracerApi;
  #closed = false;

  constructor(settings: TracingSettings, opts: OpenTracerOptions) {
    const exporter = new LoggedExporter(
      new OTLPTraceExporter({
        url: exporterUrl(settings.endpoint),
        // Insecure, as kube's (the exporter would take TLS for anything but http://).
        credentials: grpc.credentials.createInsecure(),
        timeoutMillis: opts.exportTimeoutMs ?? 10_000,
      }),
      opts.logger,
      settings.endpoint,
    );
    const maxQueueSize = opts.maxQueueSize ?? 8192;
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({
        "service.name": SERVICE_NAME,
        "service.instance.id": opts.serviceInstanceId ?? `apiserver-${crypto.randomUUID()}`,
      }),
      sampler: new ParentBasedSampler({
        root: new TraceIdRatioBasedSampler(settings.samplingRatePerMillion / 1_000_000),
      }),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter,
          maxQueueSize,
          maxExportBatchSize: Math.min(1024, maxQueueSize),
          scheduledDelayMillis: 1000,
          exportTimeoutMillis: opts.exportTimeoutMs ?? 10_000,
        }),
      ],
    });
    this.#tracer = this.#provider.getTracer("platform-apiserver");
    countOpenTracer(1);
  }

  startRequest(name: string, opts: RequestSpanOptions): Span {
    if (this.#closed) return NOOP_SPAN;
    const context = opts.parent ? remoteContext(opts.parent) : ROOT_CONTEXT;
    const span = this.#tracer.startSpan(name, {
      kind: SpanKind.SERVER,
      startTime: opts.startTime ?? nowMs(),
      attributes: defined(opts.attributes),
      links: opts.link ? [{ context: spanContextOf(opts.link) }] : undefined,
    }, context);
    // Not sampled: nothing below it is recorded either (the sampler is parent-based), so
    // the request goes on untraced, at no further cost.
    return span.isRecording() ? new OtelSpan(this.#tracer, span) : NOOP_SPAN;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    countOpenTracer(-1);
    // Whatever is queued gets one bounded try: a collector that is down does not hold the
    // shutdown.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#provider.shutdown().catch(() => {}),
      new Promise<void>((r) => timer = setTimeout(r, 5000)),
    ]);
    clearTimeout(timer);
  }
}

/** One recorded span. */
class OtelSpan implements Span {
  readonly recording = true;
  #ended = false;

  constructor(readonly tracer: OtelTracerApi, readonly span: OtelSpanApi) {}

  setAttribute(key: string, value: string | number | boolean | undefined): void {
    if (value !== undefined) this.span.setAttribute(key, value);
  }

  fail(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(endTime?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    this.span.end(endTime ?? nowMs());
  }

  child(name: string, attributes?: Attributes, startTime?: number): Span {
    // Work that outlived its request (a background task started in it) is not traced.
    if (this.#ended) return NOOP_SPAN;
    const span = this.tracer.startSpan(
      name,
      { attributes: defined(attributes), startTime: startTime ?? nowMs() },
      trace.setSpan(ROOT_CONTEXT, this.span),
    );
    return new OtelSpan(this.tracer, span);
  }

  traceparent(): string | undefined {
    // A stale context (a background task that outlived its request) sends none.
    if (this.#ended) return undefined;
    const c = this.span.spanContext();
    return `00-${c.traceId}-${c.spanId}-${c.traceFlags & TraceFlags.SAMPLED ? "01" : "00"}`;
  }
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

function spanContextOf(p: TraceParent) {
  return {
    traceId: p.traceId,
    spanId: p.spanId,
    traceFlags: p.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  };
}

function remoteContext(p: TraceParent): Context {
  return trace.setSpanContext(ROOT_CONTEXT, spanContextOf(p));
}

function defined(attributes: Attributes | undefined): OtelAttributes | undefined {
  if (!attributes) return undefined;
  const out: OtelAttributes = {};
  for (const k in attributes) if (attributes[k] !== undefined) out[k] = attributes[k];
  return out;
}
