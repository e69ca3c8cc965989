import assert from "node:assert/strict";
import { notFound, silentLogger } from "../../api/mod.ts";
import { type AuditEvent, parseAuditPolicy, PolicyEvaluator } from "../../audit/mod.ts";
import type { Handler, RequestContext } from "../context.ts";
import { requestInfoOf } from "../request_info.ts";
import { auditFilter, type Auditing } from "./audit.ts";

function auditing(rules: unknown[], extra: Record<string, unknown> = {}) {
  const events: AuditEvent[] = [];
  const policy = parseAuditPolicy(
    { apiVersion: "audit.platform.io/v1", kind: "Policy", rules, ...extra },
    "p.yaml",
  );
  const a: Auditing = {
    policy: new PolicyEvaluator(policy),
    backend: { process: (ev) => void events.push(ev), close: () => Promise.resolve() },
    logger: silentLogger,
  };
  return { a, events };
}

function context(method: string, path: string): RequestContext {
  const url = new URL(`https://localhost${path}`);
  const info = requestInfoOf(method, url);
  return {
    req: new Request(url, { method }),
    url,
    info,
    warnings: [],
    signal: new AbortController().signal,
    user: { username: "alice", groups: ["staff"] },
    auditID: "id-1",
    remoteAddr: "192.0.2.1",
  };
}

const PODS = "/api/v1/namespaces/default/pods";

Deno.test("audit filter: level None records nothing and leaves the context alone", async () => {
  const { a, events } = auditing([{ level: "None" }]);
  const ctx = context("GET", PODS);
  await auditFilter(a)(ctx, () => Promise.resolve(new Response("{}")));
  assert.deepEqual(events, []);
  assert.equal(ctx.audit, undefined);
});

Deno.test("audit filter: a handler that throws something else than a Status error is Panic", async () => {
  const { a, events } = auditing([{ level: "Metadata" }]);
  const boom: Handler = () => Promise.reject(new TypeError("boom"));
  await assert.rejects(auditFilter(a)(context("GET", PODS), boom), TypeError);
  assert.deepEqual(events.map((e) => e.stage), ["RequestReceived", "Panic"]);
  assert.deepEqual(events[1].responseStatus, {
    metadata: {},
    status: "Failure",
    message: "APIServer panic'd: TypeError: boom",
    reason: "InternalError",
    code: 500,
  });
  assert.deepEqual(events[1].sourceIPs, ["192.0.2.1"]);
});

Deno.test("audit filter: a Status error completes the request with its status", async () => {
  const { a, events } = auditing([{ level: "Metadata" }]);
  const missing: Handler = () => Promise.reject(notFound({ group: "", resource: "pods" }, "p"));
  await assert.rejects(auditFilter(a)(context("GET", `${PODS}/p`), missing));
  assert.deepEqual(events.map((e) => e.stage), ["RequestReceived", "ResponseComplete"]);
  assert.equal(events[1].responseStatus?.code, 404);
  assert.equal(events[1].responseStatus?.reason, "NotFound");
  assert.equal(events[1].responseStatus?.message, 'pods "p" not found');
  assert.deepEqual(events[1].objectRef, {
    resource: "pods",
    namespace: "default",
    name: "p",
    apiVersion: "v1",
  });
});

Deno.test("audit filter: omitted stages are not emitted; a watch starts, then completes when its stream ends", async () => {
  const { a, events } = auditing([{ level: "RequestResponse" }], {
    omitStages: ["RequestReceived"],
  });
  const watch: Handler = () =>
    Promise.resolve(
      new Response(ReadableStream.from([new TextEncoder().encode('{"type":"ADDED"}\n')]), {
        headers: { "Content-Type": "application/json" },
      }),
    );
  const res = await auditFilter(a)(context("GET", `${PODS}?watch=true`), watch);
  assert.deepEqual(events.map((e) => e.stage), ["ResponseStarted"]);
  assert.equal(await res.text(), '{"type":"ADDED"}\n');
  assert.deepEqual(events.map((e) => e.stage), ["ResponseStarted", "ResponseComplete"]);
  assert.equal(events[1].responseObject, undefined);
  assert.equal(events[1].verb, "watch");
});

Deno.test("audit filter: the impersonated user is the one the request was served as", async () => {
  const { a, events } = auditing([{ level: "Metadata" }]);
  const asJane: Handler = (ctx) => {
    ctx.user = { username: "jane", groups: ["system:authenticated"] };
    return Promise.resolve(new Response("{}"));
  };
  await auditFilter(a)(context("GET", PODS), asJane);
  assert.equal(events[1].user.username, "alice");
  assert.equal(events[1].impersonatedUser?.username, "jane");
  assert.equal(events[0].impersonatedUser, undefined);
});

Deno.test("audit filter: the request's arrival, read before authentication, is its requestReceivedTimestamp", async () => {
  const { a, events } = auditing([{ level: "Metadata" }]);
  const ctx = context("GET", `${PODS}/p`);
  // The chain's entry read the clock 250 ms ago; authentication took the time since.
  ctx.arrived = performance.now() - 250;
  const arrival = new Date(performance.timeOrigin + ctx.arrived).toISOString().slice(0, 23);
  await auditFilter(a)(ctx, () => Promise.resolve(new Response("{}")));
  const [received, done] = events;
  assert.equal(received.requestReceivedTimestamp.slice(0, 23), arrival);
  // kube stamps RequestReceived with the arrival too; later stages with their own time.
  assert.equal(received.stageTimestamp, received.requestReceivedTimestamp);
  assert.equal(done.requestReceivedTimestamp, received.requestReceivedTimestamp);
  const waited = Date.parse(done.stageTimestamp) - Date.parse(done.requestReceivedTimestamp);
  assert.ok(waited >= 240, `ResponseComplete ${waited} ms after the arrival`);
  // Without the chain's clock reading (no arrival), the filter reads the clock itself.
  const { a: b, events: others } = auditing([{ level: "Metadata" }]);
  const before = Date.now();
  await auditFilter(b)(context("GET", PODS), () => Promise.resolve(new Response("{}")));
  assert.ok(Date.parse(others[0].requestReceivedTimestamp) >= before - 1);
});
