import assert from "node:assert/strict";
import { atStage, newEvent, responseStatusOf } from "./event.ts";
import { eventJson, plainValue, RawJson } from "./event_json.ts";

const alice = { username: "alice", uid: "1", groups: ["dev", "system:authenticated"] };

function event(i: number) {
  const ev = newEvent({
    level: (["Metadata", "Request", "RequestResponse"] as const)[i % 3],
    auditID: `id-${i}-"quoted"`,
    requestURI: `/api/v1/namespaces/ns${i}/configmaps?labelSelector=a%3Db&x=\u00e9`,
    verb: i % 2 ? "get" : "create",
    user: alice,
    sourceIPs: ["10.0.0.1", "127.0.0.1"].slice(0, 1 + (i % 2)),
    userAgent: i % 4 === 0 ? null : `kubectl/v1.33 (\\ "${i}")`,
    objectRef: i % 5 === 0 ? undefined : { resource: "configmaps", namespace: `ns${i}` },
    annotations: i % 3 === 0 ? {} : { "authorization.platform.io/decision": "allow" },
  });
  if (i % 2) ev.impersonatedUser = { username: `bob${i}`, groups: [] };
  const done = atStage(ev, i % 7 === 0 ? "RequestReceived" : "ResponseComplete");
  if (i % 7) {
    done.responseStatus = responseStatusOf(i % 3 ? 200 : 404, {
      message: "m\n",
      reason: "NotFound",
    });
  }
  if (i % 3 === 2) {
    done.requestObject = { metadata: { name: `n${i}` }, data: { "a\tb": "\u2028" } };
    done.responseObject = { kind: "ConfigMap", items: [1, 2.5, null, true] };
  }
  return done;
}

Deno.test("eventJson: the same text as JSON.stringify, for events of every shape", () => {
  for (let i = 0; i < 60; i++) {
    const ev = event(i);
    assert.equal(eventJson(ev), JSON.stringify(ev), `event ${i}`);
  }
});

Deno.test("eventJson: strings that need escapes are written as JSON.stringify writes them", () => {
  for (
    const text of [
      "plain",
      'q"',
      "b\\",
      "c\u0001",
      "\ud83d\ude00 pair",
      "lone \ud800",
      "\udc00",
      "\u007f\u2028",
    ]
  ) {
    const ev = event(1);
    ev.userAgent = text;
    ev.requestURI = `/api?x=${text}`;
    assert.equal(eventJson(ev), JSON.stringify(ev), JSON.stringify(text));
  }
});

Deno.test("eventJson: a body held as JSON text goes in as that text; readers see its value", () => {
  const ev = event(2);
  const text = '{"kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"v \\" \\u00e9"}}';
  ev.responseObject = new RawJson(text);
  const line = eventJson(ev);
  assert.ok(line.includes(`"responseObject":${text},"requestReceivedTimestamp"`));
  assert.deepEqual(JSON.parse(line).responseObject, JSON.parse(text));
  // JSON.stringify (the webhook backend's fallback, tests) gives the same JSON value.
  assert.deepEqual(JSON.parse(JSON.stringify(ev)), JSON.parse(line));
  assert.deepEqual(plainValue(ev.responseObject), JSON.parse(text));
  assert.equal(plainValue(7), 7);
});

Deno.test("eventJson: the user's JSON is made once per user object, and follows a new object", () => {
  const ev = event(0);
  const first = eventJson(ev);
  const other = { ...ev, user: { username: "carol", groups: ["x"] } };
  assert.equal(eventJson(other), JSON.stringify(other));
  assert.equal(eventJson(ev), first);
});

Deno.test("eventJson: a request's stages share their stable text, and a copy changed since is written as it is", () => {
  const ev = event(3);
  const received = atStage(ev, "RequestReceived");
  assert.equal(eventJson(received), JSON.stringify(received));
  const changes: [string, (e: ReturnType<typeof event>) => void][] = [
    ["auditID", (e) => e.auditID = "other"],
    ["requestURI", (e) => e.requestURI = "/api/v1/other"],
    ["verb", (e) => e.verb = "list"],
    ["level", (e) => e.level = "Request"],
    ["user", (e) => e.user = { username: "carol", groups: [] }],
    ["sourceIPs", (e) => e.sourceIPs = ["10.9.9.9"]],
    ["userAgent", (e) => e.userAgent = "curl/8"],
    ["no userAgent", (e) => e.userAgent = undefined],
    ["requestReceivedTimestamp", (e) => e.requestReceivedTimestamp = "2026-01-01T00:00:00.000000Z"],
  ];
  for (const [field, change] of changes) {
    const done = atStage(ev, "ResponseComplete");
    change(done);
    assert.equal(eventJson(done), JSON.stringify(done), field);
  }
  const done = atStage(ev, "ResponseComplete");
  assert.equal(eventJson(done), JSON.stringify(done));
});

Deno.test("eventJson: an object reference filled in or changed between stages is written as it is then", () => {
  const ev = event(4);
  const ref = ev.objectRef!;
  const received = atStage(ev, "RequestReceived");
  assert.equal(eventJson(received), JSON.stringify(received));
  // A create's reference gets its name once the body is read, in the same object.
  ref.name = "made";
  const named = atStage(ev, "ResponseComplete");
  assert.equal(eventJson(named), JSON.stringify(named));
  for (
    const field of ["apiGroup", "apiVersion", "subresource", "uid", "resourceVersion"] as const
  ) {
    ref[field] = `${field}-1`;
    const changed = atStage(ev, "ResponseComplete");
    assert.equal(eventJson(changed), JSON.stringify(changed), field);
  }
  const replaced = { ...atStage(ev, "ResponseComplete"), objectRef: { resource: "secrets" } };
  assert.equal(eventJson(replaced), JSON.stringify(replaced));
});

Deno.test("responseStatusOf: a success's status is one frozen object per code, written as JSON.stringify writes it", () => {
  const ok = responseStatusOf(200);
  assert.equal(responseStatusOf(200), ok);
  assert.ok(Object.isFrozen(ok) && Object.isFrozen(ok.metadata));
  assert.deepEqual(ok, { metadata: {}, code: 200 });
  assert.notEqual(responseStatusOf(201), ok);
  const failed = responseStatusOf(404, { message: "gone", reason: "NotFound" });
  assert.ok(!Object.isFrozen(failed));
  const ev = event(6);
  for (const status of [ok, responseStatusOf(201), failed, { ...ok, code: 299 }]) {
    ev.responseStatus = status;
    assert.equal(eventJson(ev), JSON.stringify(ev));
  }
});

Deno.test("atStage: RequestReceived, emitted as the event is made, is stamped with its arrival", () => {
  const ev = event(0);
  const made = newEvent({ ...ev, userAgent: ev.userAgent, annotations: {} });
  const received = atStage(made, "RequestReceived");
  assert.equal(received.stageTimestamp, made.requestReceivedTimestamp);
  assert.equal(eventJson(received), JSON.stringify(received));
  const later = atStage(received, "ResponseComplete");
  assert.ok(later.stageTimestamp >= received.stageTimestamp);
  assert.equal(eventJson(later), JSON.stringify(later));
});
