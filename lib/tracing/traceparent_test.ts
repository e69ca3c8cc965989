import assert from "node:assert/strict";
import { formatTraceParent, parseTraceParent } from "./traceparent.ts";
import { endpointProblem, grpcTarget } from "./endpoint.ts";
import { childSpan, currentTraceparent, NOOP_SPAN, traced } from "./span.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

Deno.test("traceparent: valid headers parse, invalid ones are as if absent", () => {
  assert.deepEqual(parseTraceParent(`00-${TRACE}-${SPAN}-01`), {
    traceId: TRACE,
    spanId: SPAN,
    sampled: true,
  });
  assert.equal(parseTraceParent(`00-${TRACE}-${SPAN}-00`)?.sampled, false);
  // A later version is read by its first fields; version ff and all-zero ids are invalid.
  assert.equal(parseTraceParent(`01-${TRACE}-${SPAN}-03-more`)?.sampled, true);
  for (
    const bad of [
      null,
      "",
      "garbage",
      `ff-${TRACE}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE}-${SPAN}`,
    ]
  ) {
    assert.equal(parseTraceParent(bad), undefined, String(bad));
  }
  assert.equal(
    formatTraceParent({ traceId: TRACE, spanId: SPAN, sampled: true }),
    `00-${TRACE}-${SPAN}-01`,
  );
});

Deno.test("tracing endpoint: kube's gRPC targets, as the exporter dials them", () => {
  assert.equal(endpointProblem("localhost:4317"), undefined);
  assert.equal(endpointProblem("dns:///collector:4317"), undefined);
  assert.equal(endpointProblem("unix:///run/otel.sock"), undefined);
  assert.match(endpointProblem("http://collector:4317")!, /unsupported scheme: http/);
  assert.match(endpointProblem("unix-abstract:otel")!, /unsupported scheme: unix-abstract/);
  assert.equal(grpcTarget("localhost:4317"), "localhost:4317");
  assert.equal(grpcTarget("dns:///collector:4317"), "collector:4317");
  assert.equal(grpcTarget("dns://8.8.8.8/collector:4317"), "collector:4317");
  assert.equal(grpcTarget("unix:///run/otel.sock"), "unix:///run/otel.sock");
});

Deno.test("tracing off: children are the shared no-op span and nothing is sent", async () => {
  assert.equal(childSpan("Get file", { key: "/a" }), NOOP_SPAN);
  assert.equal(currentTraceparent(), undefined);
  assert.equal(await traced("Create file", undefined, () => Promise.resolve(7)), 7);
});
