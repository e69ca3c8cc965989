/**
 * The tracer over the OpenTelemetry JS SDK, set up as kube-apiserver sets its own: resource
 * `service.name: apiserver` with a `service.instance.id`, parent-based sampling whose roots
 * are sampled at `samplingRatePerMillion` / 1e6 (the SDK's ratio sampler; none when 0: then
 * only callers' sampled traces are recorded), the SDK's batch span processor with a bounded
 * queue and its OTLP/gRPC exporter, insecure as kube's. Each server has its own.
 *
 * Spans are made here, on the request thread, as small records (the SDK's own Tracer cost
 * 10–30 µs a span on this machine, and a request has five or more); the processor and the
 * exporter run in a worker (export_worker.ts), which encodes and sends them on another core.
 * Memory is bounded on both sides: past `maxQueueSize` spans waiting, new ones are dropped, so
 * a collector that is down or slow never grows memory or holds a request.
 *
 * Loaded only when tracing is configured (tracer.ts imports it dynamically).
 *
 * @module
 */

import { TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import type { Logger } from "../api/mod.ts";
import { type Attributes, countOpenTracer, NOOP_SPAN, type Span } from "./span.ts";
import type { OpenTracerOptions, RequestSpanOptions, Tracer, TracingSettings } from "./tracer.ts";
import { exporterUrl } from "./endpoint.ts";
import { nowMs } from "./clock.ts";
import { spanId, traceId } from "./ids.ts";
import type { FlatValue, FromExportWorker, ToExportWorker } from "./span_record.ts";
import type { TraceParent } from "./traceparent.ts";

/** kube-apiserver's `service.name`. */
export const SERVICE_NAME = "apiserver";

/** Spans sent to the worker in one message at most. */
const BATCH = 512;
/** How long a finished span waits for its batch to fill. */
const FLUSH_MS = 200;
/** OTel's SpanKind values. */
const INTERNAL = 0;
const SERVER = 1;

export class OtelTracer implements Tracer {
  readonly enabled = true;
  readonly #worker: Worker;
  readonly #rootSampler: TraceIdRatioBasedSampler;
  readonly #ratio: number;
  readonly #maxQueued: number;
  readonly #logger: Logger;
  /** Finished spans as flat values (span_record.ts says the layout), and how many. */
  #pending: FlatValue[] = [];
  #pendingSpans = 0;
  /** Spans posted to the worker that it has not taken yet. */
  #inFlight: number[] = [];
  #inFlightSpans = 0;
  #timer?: ReturnType<typeof setTimeout>;
  #dropped = 0;
  #closed = false;
  #workerClosed?: () => void;

  constructor(settings: TracingSettings, opts: OpenTracerOptions) {
    this.#logger = opts.logger;
    this.#maxQueued = opts.maxQueueSize ?? 16_384;
    this.#ratio = settings.samplingRatePerMillion / 1_000_000;
    this.#rootSampler = new TraceIdRatioBasedSampler(this.#ratio);
    this.#worker = new Worker(new URL("./export_worker.ts", import.meta.url).href, {
      type: "module",
    });
    this.#worker.onmessage = (e: MessageEvent<FromExportWorker>) => this.#onMessage(e.data);
    this.#post({
      type: "start",
      url: exporterUrl(settings.endpoint),
      timeoutMs: opts.exportTimeoutMs ?? 10_000,
      maxQueueSize: this.#maxQueued,
      resource: {
        "service.name": SERVICE_NAME,
        "service.instance.id": opts.serviceInstanceId ?? `apiserver-${crypto.randomUUID()}`,
      },
      endpoint: settings.endpoint,
    });
    countOpenTracer(1);
  }

  startRequest(name: string, opts: RequestSpanOptions): Span {
    if (this.#closed) return NOOP_SPAN;
    const parent = opts.parent;
    // Parent-based sampling: a caller's decision stands; a root is sampled by its trace id.
    const trace = parent?.traceId ?? traceId();
    const sampled = parent ? parent.sampled : this.#sampleRoot(trace);
    // Not sampled: nothing below it is recorded either, so the request goes on untraced, at
    // no further cost.
    if (!sampled) return NOOP_SPAN;
    const span = new RecordedSpan(
      this,
      name,
      SERVER,
      trace,
      parent?.spanId,
      opts.startTime ?? nowMs(),
      opts.attributes,
    );
    if (parent) span.parentRemote = true;
    if (opts.link) span.links = [opts.link];
    return span;
  }

  /** Whether a trace started here is sampled: the SDK's ratio sampler, asked only between the
   * two ends (it checks the id with a regular expression). */
  #sampleRoot(trace: string): boolean {
    if (this.#ratio >= 1) return true;
    if (this.#ratio <= 0) return false;
    return this.#rootSampler.shouldSample(ROOT_CONTEXT, trace).decision === 2;
  }

  /** Queues a finished span for the worker; dropped while the worker is that far behind. */
  ended(span: RecordedSpan): void {
    if (this.#closed) return;
    if (this.#inFlightSpans + this.#pendingSpans >= this.#maxQueued) {
      if (this.#dropped++ === 0) {
        this.#logger.warn("tracing: the span queue is full: dropping spans until it drains");
      }
      return;
    }
    flatten(span, this.#pending);
    if (++this.#pendingSpans >= BATCH) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), FLUSH_MS);
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#pendingSpans) return;
    const values = this.#pending;
    const count = this.#pendingSpans;
    this.#pending = [];
    this.#pendingSpans = 0;
    this.#inFlight.push(count);
    this.#inFlightSpans += count;
    // As one JSON text of flat values: posting a string copies it, where a structured clone
    // walks every value (8.7 µs a traced GET in a profile, against about 1 for the JSON).
    this.#post({ type: "spans", json: JSON.stringify(values) });
  }

  #onMessage(m: FromExportWorker): void {
    if (m.type === "taken") {
      this.#inFlightSpans -= this.#inFlight.shift() ?? 0;
      if (this.#dropped && this.#inFlightSpans === 0) {
        this.#logger.warn(`tracing: ${this.#dropped} spans were dropped (the queue was full)`);
        this.#dropped = 0;
      }
    } else if (m.type === "log") {
      this.#logger[m.level](m.message);
    } else if (m.type === "closed") {
      this.#workerClosed?.();
    }
  }

  #post(m: ToExportWorker): void {
    this.#worker.postMessage(m);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    countOpenTracer(-1);
    // Whatever is queued gets one bounded try: a collector that is down does not hold the
    // shutdown.
    const closed = new Promise<void>((r) => this.#workerClosed = r);
    this.#post({ type: "close" });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closed, new Promise<void>((r) => timer = setTimeout(r, 5000))]);
    clearTimeout(timer);
    this.#worker.terminate();
  }
}

/** One recorded span, handed to the tracer when it ends. */
class RecordedSpan implements Span {
  readonly recording = true;
  readonly spanId = spanId();
  endMs = 0;
  /** Attribute keys and values, alternating. */
  readonly attributes: FlatValue[] = [];
  error?: string;
  parentRemote = false;
  links?: TraceParent[];
  #ended = false;

  constructor(
    readonly tracer: OtelTracer,
    readonly name: string,
    readonly kind: number,
    readonly traceId: string,
    readonly parentSpanId: string | undefined,
    readonly startMs: number,
    attributes: Attributes | undefined,
  ) {
    if (attributes) {
      for (const k in attributes) {
        const v = attributes[k];
        if (v !== undefined) this.attributes.push(k, v);
      }
    }
  }

  setAttribute(key: string, value: string | number | boolean | undefined): void {
    if (value !== undefined && !this.#ended) this.attributes.push(key, value);
  }

  fail(message: string): void {
    this.error = message;
  }

  end(endTime?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    this.endMs = endTime ?? nowMs();
    this.tracer.ended(this);
  }

  child(name: string, attributes?: Attributes, startTime?: number): Span {
    // Work that outlived its request (a background task started in it) is not traced.
    if (this.#ended) return NOOP_SPAN;
    return new RecordedSpan(
      this.tracer,
      name,
      INTERNAL,
      this.traceId,
      this.spanId,
      startTime ?? nowMs(),
      attributes,
    );
  }

  traceparent(): string | undefined {
    // A stale context (a background task that outlived its request) sends none.
    if (this.#ended) return undefined;
    return `00-${this.traceId}-${this.spanId}-01`;
  }
}

/** Appends a span's values in the layout of span_record.ts. */
function flatten(span: RecordedSpan, out: FlatValue[]): void {
  out.push(
    span.name,
    span.kind,
    span.traceId,
    span.spanId,
    span.parentSpanId ?? "",
    span.parentRemote,
    span.startMs,
    span.endMs,
    span.error ?? "",
    span.links?.length ?? 0,
  );
  for (const l of span.links ?? []) out.push(l.traceId, l.spanId, l.sampled);
  out.push(span.attributes.length / 2, ...span.attributes);
}
