/**
 * The tracer, set up as kube-apiserver sets its own: resource `service.name: apiserver` with
 * a `service.instance.id`, parent-based sampling whose roots are sampled at
 * `samplingRatePerMillion` / 1e6 (the OpenTelemetry SDK's ratio sampler; none when 0: then
 * only callers' sampled traces are recorded), spans exported in batches over OTLP/gRPC,
 * insecure as kube's. Each server has its own.
 *
 * Spans are made here, on the request thread, as small records (the SDK's own Tracer cost
 * 10–30 µs a span on this machine, and a request has five or more), and each is encoded as
 * OTLP protobuf when it ends, into the batch's buffer (otlp_encoding.ts); a full batch (or
 * one 200 ms old) is handed to the export worker (export_worker.ts) with its buffer, which
 * sends it. Memory is bounded: past `maxQueueSize` spans encoded and not yet sent, new ones
 * are dropped (and counted), so a collector that is down or slow never grows memory or holds
 * a request.
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
import { grpcTarget } from "./endpoint.ts";
import { nowMs } from "./clock.ts";
import { SpanId, TraceId } from "./ids.ts";
import type { FromExportWorker, ToExportWorker } from "./export_messages.ts";
import { type EndedSpan, type FlatValue, SpanBatch } from "./otlp_encoding.ts";
import type { TraceParent } from "./traceparent.ts";

/** kube-apiserver's `service.name`. */
export const SERVICE_NAME = "apiserver";

/** A batch is sent at this many spans, or bytes (a collector takes 4 MiB by default). */
const BATCH_SPANS = 2048;
const BATCH_BYTES = 1024 * 1024;
/** How long a finished span waits for its batch to fill. */
const FLUSH_MS = 200;
/** The instrumentation scope of every span. */
const SCOPE = "platform-apiserver";
/** OTLP's SpanKind values. */
const INTERNAL = 1;
const SERVER = 2;

export class OtelTracer implements Tracer {
  readonly enabled = true;
  readonly #worker: Worker;
  readonly #rootSampler: TraceIdRatioBasedSampler;
  readonly #ratio: number;
  readonly #maxQueued: number;
  readonly #logger: Logger;
  /** The spans ended and not yet handed to the worker, encoded. */
  readonly #batch: SpanBatch;
  /** Spans handed to the worker and not yet sent (or failed). */
  #inFlight = 0;
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
    this.#batch = new SpanBatch({
      "service.name": SERVICE_NAME,
      "service.instance.id": opts.serviceInstanceId ?? `apiserver-${crypto.randomUUID()}`,
    }, SCOPE);
    this.#post({
      type: "start",
      target: grpcTarget(settings.endpoint),
      endpoint: settings.endpoint,
      timeoutMs: opts.exportTimeoutMs ?? 10_000,
    });
    countOpenTracer(1);
  }

  startRequest(name: string, opts: RequestSpanOptions): Span {
    if (this.#closed) return NOOP_SPAN;
    const parent = opts.parent;
    // Parent-based sampling: a caller's decision stands; a root is sampled by its trace id.
    const trace = parent ? TraceId.fromHex(parent.traceId) : TraceId.random();
    const sampled = parent ? parent.sampled : this.#sampleRoot(trace);
    // Not sampled: nothing below it is recorded either, so the request goes on untraced, at
    // no further cost.
    if (!sampled) return NOOP_SPAN;
    const span = new RecordedSpan(
      this,
      name,
      SERVER,
      trace,
      parent && SpanId.fromHex(parent.spanId),
      opts.startTime ?? nowMs(),
      opts.attributes,
    );
    if (parent) span.parentRemote = true;
    if (opts.link) span.links = [opts.link];
    return span;
  }

  /** Whether a trace started here is sampled: the SDK's ratio sampler, asked only between the
   * two ends (it checks the id with a regular expression). */
  #sampleRoot(trace: TraceId): boolean {
    if (this.#ratio >= 1) return true;
    if (this.#ratio <= 0) return false;
    return this.#rootSampler.shouldSample(ROOT_CONTEXT, trace.hex()).decision === 2;
  }

  /** Encodes a finished span into the batch; dropped while that many wait to be sent. */
  ended(span: RecordedSpan): void {
    if (this.#closed) return;
    if (this.#inFlight + this.#batch.count >= this.#maxQueued) {
      if (this.#dropped++ === 0) {
        this.#logger.warn("tracing: the span queue is full: dropping spans until it drains");
      }
      return;
    }
    this.#batch.add(span);
    if (this.#batch.count >= BATCH_SPANS || this.#batch.bytes >= BATCH_BYTES) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), FLUSH_MS);
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const spans = this.#batch.count;
    if (!spans) return;
    const request = this.#batch.take();
    this.#inFlight += spans;
    // The buffer moves to the worker: nothing is copied.
    this.#worker.postMessage(
      { type: "export", request, spans } satisfies ToExportWorker,
      [request.buffer],
    );
  }

  #onMessage(m: FromExportWorker): void {
    if (m.type === "done") {
      this.#inFlight -= m.spans;
      if (this.#dropped && this.#inFlight === 0) {
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
class RecordedSpan implements Span, EndedSpan {
  readonly recording = true;
  readonly spanId = SpanId.random();
  endMs = 0;
  /** Attribute keys and values, alternating. */
  readonly attributes: FlatValue[] = [];
  error: string | undefined = undefined;
  parentRemote = false;
  links: TraceParent[] | undefined = undefined;
  #ended = false;

  constructor(
    readonly tracer: OtelTracer,
    readonly name: string,
    readonly kind: number,
    readonly traceId: TraceId,
    readonly parentSpanId: SpanId | undefined,
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
    return `00-${this.traceId.hex()}-${this.spanId.hex()}-01`;
  }
}
