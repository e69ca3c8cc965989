import assert from "node:assert/strict";
import {
  atLastStage,
  atStage,
  formatMicro,
  newEvent,
  responseStatusOf,
  sourceIPsOf,
  withoutManagedFields,
} from "./event.ts";

const start = {
  level: "Metadata" as const,
  auditID: "id-1",
  requestURI: "/api/v1/namespaces/default/pods?limit=1",
  verb: "list",
  user: { username: "alice", groups: ["staff"] },
  sourceIPs: ["127.0.0.1"],
  userAgent: "kubectl/v1.31",
  objectRef: { resource: "pods", namespace: "default", apiVersion: "v1" },
  annotations: {},
};

Deno.test("audit event: fields in kube's order, absent ones left out of the JSON", () => {
  const ev = newEvent(start);
  const json = JSON.parse(JSON.stringify(atStage(ev, "RequestReceived")));
  assert.deepEqual(Object.keys(json), [
    "kind",
    "apiVersion",
    "level",
    "auditID",
    "stage",
    "requestURI",
    "verb",
    "user",
    "sourceIPs",
    "userAgent",
    "objectRef",
    "requestReceivedTimestamp",
    "stageTimestamp",
  ]);
  assert.equal(json.kind, "Event");
  assert.equal(json.apiVersion, "audit.platform.io/v1");
  assert.ok(json.requestReceivedTimestamp <= json.stageTimestamp);
});

Deno.test("audit event: each stage is a copy stamped then, with the annotations so far", () => {
  const ev = newEvent({ ...start, userAgent: null });
  const received = atStage(ev, "RequestReceived");
  ev.annotations!["authorization.platform.io/decision"] = "allow";
  ev.responseStatus = responseStatusOf(200);
  const complete = atStage(ev, "ResponseComplete");
  assert.equal(received.annotations, undefined);
  assert.equal(received.responseStatus, undefined);
  assert.equal(received.userAgent, undefined);
  assert.deepEqual(complete.annotations, { "authorization.platform.io/decision": "allow" });
  assert.deepEqual(complete.responseStatus, { metadata: {}, code: 200 });
  assert.equal(complete.stage, "ResponseComplete");
  assert.ok(complete.stageTimestamp >= complete.requestReceivedTimestamp);
});

Deno.test("audit event: a failure's status in metav1.Status words", () => {
  assert.deepEqual(responseStatusOf(404, { message: 'pods "p" not found', reason: "NotFound" }), {
    metadata: {},
    status: "Failure",
    message: 'pods "p" not found',
    reason: "NotFound",
    code: 404,
  });
  assert.deepEqual(responseStatusOf(201, { message: "x", reason: "y" }), {
    metadata: {},
    code: 201,
  });
});

Deno.test("audit event: microsecond timestamps", () => {
  const t = Date.parse("2026-11-27T10:00:00.123Z") + 0.456;
  assert.equal(formatMicro(t), "2026-11-27T10:00:00.123456Z");
  assert.equal(formatMicro(Date.parse("2026-11-27T10:00:01Z")), "2026-11-27T10:00:01.000000Z");
  // Within one second, and back to an earlier one: the text is the time's, whatever came before.
  assert.equal(
    formatMicro(Date.parse("2026-11-27T10:00:01.999Z") + 0.9995),
    "2026-11-27T10:00:01.999999Z",
  );
  assert.equal(formatMicro(Date.parse("2026-11-27T10:00:01.007Z")), "2026-11-27T10:00:01.007000Z");
  assert.equal(formatMicro(Date.parse("2026-11-26T23:59:59.5Z")), "2026-11-26T23:59:59.500000Z");
  for (let i = 0; i < 1000; i++) {
    const t = Date.parse("2026-11-27T10:00:00Z") + i * 7.3;
    assert.equal(formatMicro(t).slice(0, 23) + "Z", new Date(Math.floor(t)).toISOString());
  }
});

Deno.test("audit event: source IPs are X-Forwarded-For's, then the connection's", () => {
  assert.deepEqual(sourceIPsOf("10.0.0.1, 10.0.0.2", "127.0.0.1"), [
    "10.0.0.1",
    "10.0.0.2",
    "127.0.0.1",
  ]);
  assert.deepEqual(sourceIPsOf("10.0.0.1", "10.0.0.1"), ["10.0.0.1"]);
  assert.deepEqual(sourceIPsOf(null, "::1"), ["::1"]);
  assert.deepEqual(sourceIPsOf(" , ", undefined), []);
});

Deno.test("audit event: managed fields are removed from objects and list items, inputs kept", () => {
  const obj = { metadata: { name: "a", managedFields: [{ manager: "m" }] }, data: { k: "v" } };
  assert.deepEqual(withoutManagedFields(obj), { metadata: { name: "a" }, data: { k: "v" } });
  assert.deepEqual(obj.metadata.managedFields, [{ manager: "m" }]);
  const list = { kind: "List", metadata: {}, items: [obj] };
  assert.deepEqual(withoutManagedFields(list), {
    kind: "List",
    metadata: {},
    items: [{ metadata: { name: "a" }, data: { k: "v" } }],
  });
  assert.equal(withoutManagedFields("text"), "text");
});

Deno.test("audit event: the last stage stamps the event itself; empty annotations are left out", () => {
  const ev = newEvent({ ...start, annotations: {} });
  const received = atStage(ev, "RequestReceived");
  const done = atLastStage(ev, "ResponseComplete");
  assert.equal(done, ev, "no copy");
  assert.equal(done.stage, "ResponseComplete");
  assert.ok(done.stageTimestamp >= received.stageTimestamp);
  assert.equal(done.annotations, undefined);
  assert.equal(received.stage, "RequestReceived", "the earlier stage's copy is unchanged");
  const annotated = newEvent({ ...start, annotations: { "a.io/b": "c" } });
  assert.deepEqual(atLastStage(annotated, "Panic").annotations, { "a.io/b": "c" });
});
