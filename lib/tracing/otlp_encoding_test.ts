/**
 * The OTLP encoding read back with protobufjs and opentelemetry-proto's own .proto files
 * (testdata/otlp): every field the encoder writes, each attribute type, ids, times to the
 * nanosecond, status, events, links, flags, long and non-ASCII strings, batch after batch.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import protobuf from "protobufjs";
import { type EndedSpan, SpanBatch } from "./otlp_encoding.ts";
import { SpanId, TraceId } from "./ids.ts";

const PROTOS = decodeURIComponent(new URL("../../testdata/otlp/", import.meta.url).pathname);

function requestType(): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTOS, target);
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false });
  return root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
}

// deno-lint-ignore no-explicit-any
type Decoded = any;

function decode(bytes: Uint8Array): Decoded {
  const type = requestType();
  return type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: String });
}

const hex = (base64: string) =>
  Array.from(atob(base64), (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");

/** An attribute's value as the receiver sees it: its type and value. */
function attribute(kvs: Decoded[], key: string): [string, unknown] {
  const kv = kvs.find((kv) => kv.key === key);
  assert.ok(kv, `attribute ${key}`);
  const [[type, value]] = Object.entries(kv.value);
  return [type, value];
}

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const LONG = "x".repeat(20_000);
const UNICODE = "grüße ✓ 🚀 ".repeat(10);

function span(overrides: Partial<EndedSpan>): EndedSpan {
  return {
    name: "GET /api/v1/namespaces/{:namespace}/configmaps/{:name}",
    kind: 2,
    traceId: TraceId.fromHex(TRACE),
    spanId: SpanId.fromHex("a1b2c3d4e5f60718"),
    parentSpanId: undefined,
    parentRemote: false,
    startMs: 1_800_000_000_123.25,
    endMs: 1_800_000_000_124.0625,
    attributes: [],
    error: undefined,
    links: undefined,
    ...overrides,
  };
}

Deno.test("otlp encoding: a batch decodes with the OTLP protos, every field as written", () => {
  const batch = new SpanBatch(
    { "service.name": "apiserver", "service.instance.id": "apiserver-1" },
    "platform-apiserver",
  );
  batch.add(span({
    parentSpanId: SpanId.fromHex(PARENT),
    parentRemote: true,
    attributes: [
      "http.request.method",
      "GET",
      "unicode",
      UNICODE,
      "long",
      LONG,
      "lone surrogates",
      "a\ud800b\udc00",
      "yes",
      true,
      "no",
      false,
      "zero",
      0,
      "status",
      200,
      "big",
      2 ** 40 + 3,
      "negative",
      -5,
      "ratio",
      1.5,
      "negative ratio",
      -0.25,
    ],
    links: [
      { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", sampled: true },
      { traceId: "0af7651916cd43dd8448eb211c80319d", spanId: "b7ad6b7169203332", sampled: false },
    ],
    events: [{ name: "About to write", timeMs: 1_800_000_000_123.5, attributes: ["n", 3] }],
  }));
  batch.add(span({
    name: "Get file",
    kind: 1,
    spanId: SpanId.fromHex("0000000000000001"),
    parentSpanId: SpanId.fromHex("a1b2c3d4e5f60718"),
    attributes: ["key", "/registry/core/configmaps/default/x"],
    error: "etcdserver: request timed out",
  }));
  assert.equal(batch.count, 2);
  const req = decode(batch.take());
  assert.equal(batch.count, 0);

  assert.equal(req.resourceSpans.length, 1);
  const rs = req.resourceSpans[0];
  assert.deepEqual(rs.resource.attributes, [
    { key: "service.name", value: { stringValue: "apiserver" } },
    { key: "service.instance.id", value: { stringValue: "apiserver-1" } },
  ]);
  assert.equal(rs.scopeSpans.length, 1);
  assert.deepEqual(rs.scopeSpans[0].scope, { name: "platform-apiserver" });
  const [request, child] = rs.scopeSpans[0].spans;

  assert.equal(request.name, "GET /api/v1/namespaces/{:namespace}/configmaps/{:name}");
  assert.equal(request.kind, "SPAN_KIND_SERVER");
  assert.equal(hex(request.traceId), TRACE);
  assert.equal(hex(request.spanId), "a1b2c3d4e5f60718");
  assert.equal(hex(request.parentSpanId), PARENT);
  // Sampled, the parent's remoteness known, and remote.
  assert.equal(request.flags, 0x301);
  assert.equal(request.startTimeUnixNano, "1800000000123250000");
  assert.equal(request.endTimeUnixNano, "1800000000124062500");
  assert.equal(request.status, undefined);
  const attrs = request.attributes;
  assert.deepEqual(attribute(attrs, "http.request.method"), ["stringValue", "GET"]);
  assert.deepEqual(attribute(attrs, "unicode"), ["stringValue", UNICODE]);
  assert.deepEqual(attribute(attrs, "long"), ["stringValue", LONG]);
  // As the UTF-8 encoder writes them: U+FFFD.
  assert.deepEqual(attribute(attrs, "lone surrogates"), ["stringValue", "a\ufffdb\ufffd"]);
  assert.deepEqual(attribute(attrs, "yes"), ["boolValue", true]);
  assert.deepEqual(attribute(attrs, "no"), ["boolValue", false]);
  assert.deepEqual(attribute(attrs, "zero"), ["intValue", "0"]);
  assert.deepEqual(attribute(attrs, "status"), ["intValue", "200"]);
  assert.deepEqual(attribute(attrs, "big"), ["intValue", String(2 ** 40 + 3)]);
  assert.deepEqual(attribute(attrs, "negative"), ["intValue", "-5"]);
  assert.deepEqual(attribute(attrs, "ratio"), ["doubleValue", 1.5]);
  assert.deepEqual(attribute(attrs, "negative ratio"), ["doubleValue", -0.25]);
  assert.equal(attrs.length, 12);
  assert.deepEqual(
    request.links.map((l: Decoded) => [hex(l.traceId), hex(l.spanId), l.flags]),
    [
      ["0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", 0x301],
      ["0af7651916cd43dd8448eb211c80319d", "b7ad6b7169203332", 0x300],
    ],
  );
  assert.equal(request.events.length, 1);
  assert.equal(request.events[0].name, "About to write");
  assert.equal(request.events[0].timeUnixNano, "1800000000123500000");
  assert.deepEqual(attribute(request.events[0].attributes, "n"), ["intValue", "3"]);

  assert.equal(child.name, "Get file");
  assert.equal(child.kind, "SPAN_KIND_INTERNAL");
  assert.equal(hex(child.spanId), "0000000000000001");
  assert.equal(hex(child.parentSpanId), "a1b2c3d4e5f60718");
  // A local parent: known not to be remote.
  assert.equal(child.flags, 0x101);
  assert.deepEqual(child.status, {
    code: "STATUS_CODE_ERROR",
    message: "etcdserver: request timed out",
  });
  assert.deepEqual(child.links ?? [], []);
});

Deno.test("otlp encoding: batch after batch, each request holds only its own spans", () => {
  const batch = new SpanBatch({ "service.name": "apiserver" }, "platform-apiserver");
  const names = (bytes: Uint8Array) =>
    decode(bytes).resourceSpans[0].scopeSpans[0].spans.map((s: Decoded) => s.name);
  // A root span: no parent id, flags say the (absent) parent is not remote.
  batch.add(span({ name: "a" }));
  const first = batch.take();
  const root = decode(first).resourceSpans[0].scopeSpans[0].spans[0];
  assert.equal(root.parentSpanId, undefined);
  assert.equal(root.flags, 0x101);
  for (let i = 0; i < 3000; i++) batch.add(span({ name: `s${i}`, attributes: ["i", i] }));
  const second = batch.take();
  assert.deepEqual(names(first), ["a"]);
  const many = names(second);
  assert.equal(many.length, 3000);
  assert.equal(many[2999], "s2999");
  batch.add(span({ name: "b" }));
  assert.deepEqual(names(batch.take()), ["b"]);
});

Deno.test("ids: hex in and out, random ids as W3C wants them", () => {
  assert.equal(TraceId.fromHex(TRACE).hex(), TRACE);
  assert.equal(new TraceId(0xffffffff, 0, 1, 0x80000000).hex(), "ffffffff000000000000000180000000");
  assert.equal(SpanId.fromHex("a1b2c3d4e5f60718").hex(), "a1b2c3d4e5f60718");
  assert.equal(new SpanId(0, 0xfedcba98).hex(), "00000000fedcba98");
  const traces = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const t = TraceId.random().hex();
    assert.match(t, /^[0-9a-f]{32}$/);
    assert.match(SpanId.random().hex(), /^[0-9a-f]{16}$/);
    traces.add(t);
  }
  assert.equal(traces.size, 1000);
});
