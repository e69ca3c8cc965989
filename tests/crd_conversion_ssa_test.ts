// deno-lint-ignore-file no-explicit-any
/**
 * Server-side apply across the versions of a custom resource whose conversion is a webhook
 * (started here) and whose versions differ in shape: v1 has `spec.color`, v1beta1
 * `spec.colour`. Managers recorded at one version conflict with, and lose their fields to,
 * writes at the other, as kube's field manager sees them: the objects before and after the
 * write converted to each manager's version, in one webhook call per such version.
 */

import { assertEquals, assertMatch } from "./assert.ts";
import { type TestServer, testServer } from "./harness.ts";
import { startTestWebhook } from "../lib/admission/webhook/webhook_testdata.ts";
import { convertColour, thingsCrd } from "./colour_crd.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const things = (v: string) => `/apis/conv.example.com/${v}/namespaces/default/things`;

function apply(t: TestServer, version: string, manager: string, spec: unknown, force = false) {
  return t.json(
    "PATCH",
    `${things(version)}/t?fieldManager=${manager}${force ? "&force=true" : ""}`,
    {
      headers: { "Content-Type": "application/apply-patch+yaml" },
      body: {
        apiVersion: `conv.example.com/${version}`,
        kind: "Thing",
        metadata: { name: "t" },
        spec,
      },
    },
  );
}

const entries = (o: any) =>
  (o.metadata.managedFields ?? []).map((
    e: any,
  ) => [e.manager, e.operation, e.apiVersion, e.fieldsV1]);

async function setUp(t: TestServer, hook: { url: string; caBundle: string }) {
  const res = await t.json("POST", CRDS, { body: thingsCrd(hook, { size: { type: "string" } }) });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  for (let i = 0; i < 400; i++) {
    if ((await t.json("GET", things("v1beta1"))).status === 200) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("things never served");
}

Deno.test("webhook conversion: appliers at another version conflict on converted fields", async () => {
  await using hook = await startTestWebhook();
  hook.respond = convertColour;
  await using t = await testServer();
  await setUp(t, hook);

  let res = await apply(t, "v1beta1", "painter", { colour: "red", size: "S" });
  assertEquals(res.status, 201, JSON.stringify(res.body));

  // At v1 the field is `color`: still the painter's, whose entry says `colour` at v1beta1.
  hook.received.length = 0;
  res = await apply(t, "v1", "admin", { color: "blue" });
  assertEquals(res.status, 409, JSON.stringify(res.body));
  assertEquals(
    res.body.message,
    'Apply failed with 1 conflict: conflict with "painter": .spec.colour',
  );
  // One call for the managed fields: both objects to the painter's version.
  assertEquals(
    hook.received.map((r) => [r.review.request.desiredAPIVersion, r.review.request.objects.length]),
    [["conv.example.com/v1beta1", 2]],
  );

  // Forced, the admin takes it; the painter keeps what it still owns.
  res = await apply(t, "v1", "admin", { color: "blue" }, true);
  assertEquals(res.status, 200, JSON.stringify(res.body));
  assertEquals(res.body.spec, { color: "blue", size: "S" });
  // (Apply entries sort by time, then manager: compared by manager here.)
  assertEquals(entries(res.body).sort((a: any, b: any) => a[0] < b[0] ? -1 : 1), [
    ["admin", "Apply", "conv.example.com/v1", { "f:spec": { "f:color": {} } }],
    ["painter", "Apply", "conv.example.com/v1beta1", { "f:spec": { "f:size": {} } }],
  ]);

  // An update at v1beta1 takes `colour` from the admin, recorded at v1.
  const live = (await t.json("GET", `${things("v1beta1")}/t`)).body;
  res = await t.json("PUT", `${things("v1beta1")}/t?fieldManager=editor`, {
    body: { ...live, spec: { ...live.spec, colour: "green" } },
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  assertEquals(entries(res.body), [
    ["painter", "Apply", "conv.example.com/v1beta1", { "f:spec": { "f:size": {} } }],
    ["editor", "Update", "conv.example.com/v1beta1", { "f:spec": { "f:colour": {} } }],
  ]);
  const v1 = (await t.json("GET", `${things("v1")}/t`)).body;
  assertEquals(v1.spec, { color: "green", size: "S" });
});

Deno.test("webhook conversion: SSA S4, one Apply entry per manager across versions", async () => {
  await using hook = await startTestWebhook();
  hook.respond = convertColour;
  await using t = await testServer();
  await setUp(t, hook);
  assertEquals((await apply(t, "v1beta1", "default", { colour: "red" })).status, 201);
  const res = await apply(t, "v1", "default", { color: "red", size: "M" });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  assertEquals(entries(res.body), [
    ["default", "Apply", "conv.example.com/v1", { "f:spec": { "f:color": {}, "f:size": {} } }],
  ]);
  // Nobody else is recorded: no conversion call for managed fields.
  hook.received.length = 0;
  const again = await apply(t, "v1", "default", { color: "red", size: "L" });
  assertEquals(again.status, 200, JSON.stringify(again.body));
  assertEquals(hook.received.length, 0);
  assertMatch(JSON.stringify(entries(again.body)), /"f:size"/);
});

Deno.test("webhook conversion: S4 removal, an apply at another version prunes what it omits", async () => {
  await using hook = await startTestWebhook();
  hook.respond = convertColour;
  await using t = await testServer();
  await setUp(t, hook);
  assertEquals((await apply(t, "v1", "default", { color: "red", size: "S" })).status, 201);
  // At v1beta1 the omitted field is `colour`: pruned as the previous v1 apply's `color`.
  let res = await apply(t, "v1beta1", "default", { size: "S" });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  assertEquals(res.body.spec, { size: "S" });
  assertEquals(entries(res.body), [
    ["default", "Apply", "conv.example.com/v1beta1", { "f:spec": { "f:size": {} } }],
  ]);

  // What another manager also owns stays.
  assertEquals((await apply(t, "v1", "default", { color: "red", size: "S" })).status, 200);
  assertEquals((await apply(t, "v1", "other", { color: "red" })).status, 200);
  res = await apply(t, "v1beta1", "default", { size: "M" });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  assertEquals(res.body.spec, { colour: "red", size: "M" });
});
