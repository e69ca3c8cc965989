/**
 * Finished spans encoded straight into an OTLP `ExportTraceServiceRequest` (protobuf, as
 * opentelemetry-proto's collector/trace/v1 defines it), one span at a time as each ends, the
 * way the OpenTelemetry JS SDK's OTLP serializer lays them out: one `ResourceSpans` with the
 * resource's attributes, one `ScopeSpans` with the instrumentation scope, the spans (ids as
 * bytes, kind as OTLP's SpanKind, times as unix nanoseconds, attributes with integers as
 * `int_value` and other numbers as `double_value`, the status, links, and the flags that say
 * whether the parent is remote).
 *
 * The SDK built an object per span, per attribute and per value and serialized them with
 * protobufjs: most of the CPU that tracing cost a request (measured; README, Tracing). Here
 * a span costs a few writes into a buffer reused from batch to batch.
 *
 * @module
 */

import { ProtoWriter, varintSize } from "./proto_writer.ts";
import type { SpanId, TraceId } from "./ids.ts";

/** An attribute value; attributes are kept as alternating keys and values. */
export type FlatValue = string | number | boolean;

/** A span that has ended, as the encoder reads it. */
export interface EndedSpan {
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly traceId: TraceId;
  readonly spanId: SpanId;
  readonly parentSpanId: SpanId | undefined;
  /** The parent is a caller's (its traceparent), not a span of this server. */
  readonly parentRemote: boolean;
  /** Milliseconds since the epoch, fractional. */
  readonly startMs: number;
  readonly endMs: number;
  /** Keys and values, alternating. */
  readonly attributes: readonly FlatValue[];
  /** Failed: status ERROR with this message. */
  readonly error: string | undefined;
  /** Spans linked to (a caller's span not trusted as parent), ids in hex. */
  readonly links: readonly { traceId: string; spanId: string; sampled: boolean }[] | undefined;
  readonly events?: readonly SpanEvent[];
}

/** Something that happened at a point of a span. */
export interface SpanEvent {
  name: string;
  timeMs: number;
  attributes: readonly FlatValue[];
}

/** OTLP's SpanFlags: the low byte is the W3C trace flags (sampled: 1). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
const SAMPLED = 0x01;
const STATUS_ERROR = 2;

/** The size of a length-delimited field (of a field number below 16) of `length` bytes. */
function fieldSize(length: number): number {
  return 1 + varintSize(length) + length;
}

/** Writes a key and value as a `KeyValue` message (field `field` of the writer's message). */
function keyValue(w: ProtoWriter, field: number, key: string, value: FlatValue): void {
  const kv = w.begin(field, 1);
  w.string(1, key);
  const any = w.begin(2, 1);
  if (typeof value === "string") w.string(1, value);
  else if (typeof value === "boolean") w.uint(2, value ? 1 : 0);
  else if (Number.isInteger(value)) w.int64(3, value);
  else w.double(4, value);
  w.end(any);
  w.end(kv);
}

function attributes(w: ProtoWriter, field: number, flat: readonly FlatValue[]): void {
  for (let i = 0; i < flat.length; i += 2) keyValue(w, field, flat[i] as string, flat[i + 1]);
}

function writeEvents(w: ProtoWriter, events: readonly SpanEvent[]): void {
  for (const e of events) {
    const event = w.begin(11, 1);
    w.unixNanos(1, e.timeMs);
    w.string(2, e.name);
    attributes(w, 3, e.attributes);
    w.end(event);
  }
}

function writeLinks(w: ProtoWriter, links: NonNullable<EndedSpan["links"]>): void {
  for (const l of links) {
    const link = w.begin(13, 1);
    w.hexBytes(1, l.traceId);
    w.hexBytes(2, l.spanId);
    w.fixed32(6, HAS_IS_REMOTE | IS_REMOTE | (l.sampled ? SAMPLED : 0));
    w.end(link);
  }
}

/** Appends one `Span` message (field 2 of `ScopeSpans`). */
export function writeSpan(w: ProtoWriter, s: EndedSpan): void {
  const span = w.begin(2, 2);
  const t = s.traceId;
  w.words4(1, t.w0, t.w1, t.w2, t.w3);
  w.words2(2, s.spanId.hi, s.spanId.lo);
  if (s.parentSpanId) w.words2(4, s.parentSpanId.hi, s.parentSpanId.lo);
  w.string(5, s.name);
  w.uint(6, s.kind);
  w.unixNanos(7, s.startMs);
  w.unixNanos(8, s.endMs);
  attributes(w, 9, s.attributes);
  if (s.events) writeEvents(w, s.events);
  if (s.links) writeLinks(w, s.links);
  if (s.error !== undefined) {
    const status = w.begin(15, 1);
    w.string(2, s.error);
    w.uint(3, STATUS_ERROR);
    w.end(status);
  }
  w.fixed32(16, HAS_IS_REMOTE | (s.parentRemote ? IS_REMOTE : 0) | SAMPLED);
  w.end(span);
}

/**
 * A batch of spans being encoded: {@link add} as they end, {@link take} the finished
 * request. The resource and scope are encoded once.
 */
export class SpanBatch {
  readonly #spans = new ProtoWriter();
  readonly #resource: Uint8Array;
  readonly #scope: Uint8Array;
  /** Spans in the batch. */
  count = 0;

  constructor(resource: Record<string, FlatValue>, scopeName: string) {
    const r = new ProtoWriter(256);
    for (const [k, v] of Object.entries(resource)) keyValue(r, 1, k, v);
    this.#resource = r.bytes().slice();
    const s = new ProtoWriter(256);
    s.string(1, scopeName);
    this.#scope = s.bytes().slice();
  }

  /** Bytes of the spans encoded so far. */
  get bytes(): number {
    return this.#spans.pos;
  }

  add(span: EndedSpan): void {
    writeSpan(this.#spans, span);
    this.count++;
  }

  /** The `ExportTraceServiceRequest` of the spans added (a buffer of its own); then empty. */
  take(): Uint8Array<ArrayBuffer> {
    // Every length is known: the spans are copied once, after the headers.
    const spans = this.#spans.bytes();
    const scopeSpans = fieldSize(this.#scope.length) + spans.length;
    const resourceSpans = fieldSize(this.#resource.length) + fieldSize(scopeSpans);
    const out = new ProtoWriter(fieldSize(resourceSpans));
    out.header(1, resourceSpans);
    out.header(1, this.#resource.length);
    out.raw(this.#resource);
    out.header(2, scopeSpans);
    out.header(1, this.#scope.length);
    out.raw(this.#scope);
    out.raw(spans);
    this.#spans.reset();
    this.count = 0;
    return out.bytes();
  }
}
