/**
 * The export worker: the OpenTelemetry SDK's batch span processor and OTLP/gRPC exporter, on
 * a thread of their own. Encoding spans as OTLP protobuf and the gRPC client cost more than
 * making the spans (a third of the server's CPU per traced GET, measured), and on the request
 * thread they took it from requests; here they use another core.
 *
 * Messages in: `start` (the exporter's settings), `spans` (a batch of finished spans, answered
 * with `taken`), `close` (export what is queued, within its timeout, then `closed`).
 *
 * @module
 */

import { TraceFlags } from "@opentelemetry/api";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import { type Resource, resourceFromAttributes } from "@opentelemetry/resources";
// @ts-types="./grpc_credentials_types.d.ts"
import * as grpc from "@grpc/grpc-js";
// @ts-types="./otlp_exporter_types.d.ts"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import {
  type FlatValue,
  type FromExportWorker,
  type SpanRecord,
  type ToExportWorker,
  unflatten,
} from "./span_record.ts";

/** The instrumentation scope of every span. */
const SCOPE = { name: "platform-apiserver" };

let processor: BatchSpanProcessor | undefined;
let resource: Resource | undefined;

/** The worker's global scope, as far as this module uses it. */
const scope = globalThis as unknown as {
  postMessage(message: FromExportWorker): void;
  onmessage: ((e: MessageEvent<ToExportWorker>) => void) | null;
};

const post = (m: FromExportWorker) => scope.postMessage(m);

scope.onmessage = (e: MessageEvent<ToExportWorker>) => {
  const m = e.data;
  if (m.type === "start") {
    const otlp = new OTLPTraceExporter({
      url: m.url,
      // Insecure, as kube's (the exporter would take TLS for anything but http://).
      credentials: grpc.credentials.createInsecure(),
      timeoutMillis: m.timeoutMs,
    });
    const exporter = new LoggedExporter(otlp, m.endpoint);
    // An empty export now: a collector that cannot be reached is logged at once.
    exporter.export([], () => {});
    resource = resourceFromAttributes(m.resource);
    processor = new BatchSpanProcessor({
      exporter,
      maxQueueSize: m.maxQueueSize,
      maxExportBatchSize: Math.min(2048, m.maxQueueSize),
      scheduledDelayMillis: 1000,
      exportTimeoutMillis: m.timeoutMs,
    });
  } else if (m.type === "spans") {
    // Past the processor's queue, spans are dropped (a collector down or slow).
    const values = JSON.parse(m.json) as FlatValue[];
    for (const r of unflatten(values)) processor?.onEnd(readable(r, resource!));
    post({ type: "taken" });
  } else if (m.type === "close") {
    (processor?.shutdown() ?? Promise.resolve()).catch(() => {}).finally(() =>
      post({ type: "closed" })
    );
  }
};

/** A record in the shape the processor and the OTLP serializer read (`ReadableSpan`). */
function readable(r: SpanRecord, resource: Resource): ReadableSpan {
  const startTime = hrTime(r.startMs);
  const endTime = hrTime(r.endMs);
  const context = { traceId: r.traceId, spanId: r.spanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name: r.name,
    kind: r.kind,
    spanContext: () => context,
    parentSpanContext: r.parentSpanId === undefined ? undefined : {
      traceId: r.traceId,
      spanId: r.parentSpanId,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: r.parentRemote ?? false,
    },
    startTime,
    endTime,
    duration: hrTime(r.endMs - r.startMs),
    status: r.error === undefined ? { code: 0 } : { code: 2, message: r.error },
    attributes: r.attributes,
    links: (r.links ?? []).map((l) => ({
      context: {
        traceId: l.traceId,
        spanId: l.spanId,
        traceFlags: l.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true,
      },
      attributes: {},
      droppedAttributesCount: 0,
    })),
    events: [],
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as ReadableSpan;
}

/** Milliseconds as OTel's [seconds, nanoseconds]. */
function hrTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, Math.max(0, nanos)];
}

/** The exporter, logging when exports start failing and when they work again (not each
 * failure: a collector that is down would fill the log). */
class LoggedExporter implements SpanExporter {
  #failing = false;

  constructor(readonly inner: SpanExporter, readonly endpoint: string) {}

  export(spans: ReadableSpan[], done: (result: { code: number; error?: Error }) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== 0 && !this.#failing) {
        this.#failing = true;
        post({
          type: "log",
          level: "warn",
          message: `tracing: cannot export spans to ${this.endpoint} (dropping them until it ` +
            `answers): ${result.error?.message ?? "export failed"}`,
        });
      } else if (result.code === 0 && this.#failing) {
        this.#failing = false;
        post({
          type: "log",
          level: "info",
          message: `tracing: exporting spans to ${this.endpoint} again`,
        });
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
