// deno-lint-ignore-file no-explicit-any
/**
 * CustomResourceDefinitions with several versions, over HTTPS: objects stored in the storage
 * version and converted on read (get, list, watch) and on write, with `None` conversion and
 * with a conversion webhook written here (HTTPS, its own CA as `caBundle`); the webhook's
 * failures (kube's 500, nothing stored); `status.storedVersions`; the CRDs refused with 422;
 * kubectl reading one version of what it wrote in another; SSA S4 and S36 across versions.
 */

import { parse } from "yaml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { type TestServer, testServer } from "./harness.ts";
import { openWatch } from "./watch_client.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";
import {
  configMapCreateWebhook,
  startTestWebhook,
} from "../lib/admission/webhook/webhook_testdata.ts";
import { convertColour, specSchema, thingsCrd } from "./colour_crd.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const ADMISSION = "/apis/admissionregistration.platform.io/v1";

/** Gadgets: v1beta1 and v1 (storage), the same schema, `None` conversion. */
function gadgetsCrd(): any {
  const s = specSchema({ size: { type: "integer" }, set: setSchema });
  return {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gadgets.versions.example.com" },
    spec: {
      group: "versions.example.com",
      scope: "Namespaced",
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
      versions: [
        { name: "v1beta1", served: true, storage: false, schema: s },
        { name: "v1", served: true, storage: true, schema: s },
      ],
    },
  };
}
const setSchema = { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } };

async function until(done: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 400; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function createCrd(t: TestServer, crd: any, probe: string) {
  const res = await t.json("POST", CRDS, { body: crd });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  await until(async () => (await t.json("GET", probe)).status === 200, `${probe} served`);
}

const obj = (apiVersion: string, kind: string, name: string, spec: unknown) => ({
  apiVersion,
  kind,
  metadata: { name },
  spec,
});

Deno.test("CRD versions: None conversion on get, list, watch and write", async () => {
  await using t = await testServer();
  const v1 = "/apis/versions.example.com/v1/namespaces/default/gadgets";
  const beta = "/apis/versions.example.com/v1beta1/namespaces/default/gadgets";
  await createCrd(t, gadgetsCrd(), beta);

  // Discovery lists the versions in kube's priority: v1 is the preferred version.
  const group = await t.json("GET", "/apis/versions.example.com");
  assertEquals(group.body.preferredVersion.version, "v1");
  assertEquals(group.body.versions.map((v: any) => v.version), ["v1", "v1beta1"]);

  const made = await t.json("POST", v1, {
    body: obj("versions.example.com/v1", "Gadget", "g1", { size: 1 }),
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  const got = await t.json("GET", `${beta}/g1`);
  assertEquals(got.status, 200);
  assertEquals(got.body.apiVersion, "versions.example.com/v1beta1");
  assertEquals(got.body.spec, { size: 1 });
  assertEquals(got.body.metadata.uid, made.body.metadata.uid);

  // Written in v1beta1, stored in v1: read back in both.
  const viaBeta = await t.json("POST", beta, {
    body: obj("versions.example.com/v1beta1", "Gadget", "g2", { size: 2 }),
  });
  assertEquals(viaBeta.status, 201, JSON.stringify(viaBeta.body));
  assertEquals(viaBeta.body.apiVersion, "versions.example.com/v1beta1");
  assertEquals((await t.json("GET", `${v1}/g2`)).body.apiVersion, "versions.example.com/v1");

  const list = await t.json("GET", beta);
  assertEquals(list.body.kind, "GadgetList");
  assertEquals(list.body.apiVersion, "versions.example.com/v1beta1");
  assertEquals(
    list.body.items.map((o: any) => [o.metadata.name, o.apiVersion]),
    [["g1", "versions.example.com/v1beta1"], ["g2", "versions.example.com/v1beta1"]],
  );

  // A watch in v1beta1 of objects written (and stored) as v1.
  await using w = await openWatch(
    t,
    `${beta}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`,
  );
  assertEquals(w.status, 200);
  await t.json("POST", v1, { body: obj("versions.example.com/v1", "Gadget", "g3", { size: 3 }) });
  const ev = await w.next(10_000);
  assertEquals(ev.type, "ADDED");
  assertEquals(ev.object.apiVersion, "versions.example.com/v1beta1");
  assertEquals(ev.object.metadata.name, "g3");

  // Updates in the other version keep what was stored.
  const put = await t.json("PUT", `${beta}/g1`, { body: { ...got.body, spec: { size: 10 } } });
  assertEquals(put.status, 200, JSON.stringify(put.body));
  const after = await t.json("GET", `${v1}/g1`);
  assertEquals([after.body.apiVersion, after.body.spec], ["versions.example.com/v1", { size: 10 }]);
});

Deno.test("CRD versions: deleting a namespace deletes its objects of every version", async () => {
  await using t = await testServer();
  await createCrd(t, gadgetsCrd(), "/apis/versions.example.com/v1beta1/gadgets");
  assertEquals(
    (await t.json("POST", "/api/v1/namespaces", { body: { metadata: { name: "gone" } } })).status,
    201,
  );
  const beta = "/apis/versions.example.com/v1beta1/namespaces/gone/gadgets";
  const made = await t.json("POST", beta, {
    body: obj("versions.example.com/v1beta1", "Gadget", "g", { size: 1 }),
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  assertEquals((await t.json("DELETE", "/api/v1/namespaces/gone")).status, 200);
  await until(
    async () => (await t.json("GET", "/api/v1/namespaces/gone")).status === 404,
    "the namespace gone",
  );
  assertEquals((await t.json("GET", "/apis/versions.example.com/v1/gadgets")).body.items, []);
});

Deno.test("CRD versions: storedVersions and the CRDs refused with 422", async () => {
  await using t = await testServer();
  const beta = "/apis/versions.example.com/v1beta1/namespaces/default/gadgets";
  await createCrd(t, gadgetsCrd(), beta);
  const path = `${CRDS}/gadgets.versions.example.com`;
  let crd = (await t.json("GET", path)).body;
  assertEquals(crd.status.storedVersions, ["v1"]);

  // The storage version moves to v1beta1: both are stored versions now.
  crd.spec.versions[0].storage = true;
  crd.spec.versions[1].storage = false;
  const moved = await t.json("PUT", path, { body: crd });
  assertEquals(moved.status, 200, JSON.stringify(moved.body));
  assertEquals(moved.body.status.storedVersions, ["v1", "v1beta1"]);

  // v1 cannot go while objects may be stored in it.
  crd = moved.body;
  crd.spec.versions = [crd.spec.versions[0]];
  const removed = await t.json("PUT", path, { body: crd });
  assertEquals(removed.status, 422);
  assertEquals(removed.body.details.causes, [{
    reason: "FieldValueInvalid",
    message: 'Invalid value: "v1": must appear in spec.versions',
    field: "status.storedVersions[0]",
  }]);

  // Once the objects are rewritten, v1 leaves storedVersions through /status, then spec.
  const status = { ...moved.body, status: { ...moved.body.status, storedVersions: ["v1beta1"] } };
  const trimmed = await t.json("PUT", `${path}/status`, { body: status });
  assertEquals(trimmed.status, 200, JSON.stringify(trimmed.body));
  assertEquals(trimmed.body.status.storedVersions, ["v1beta1"]);
  const gone = await t.json("PUT", path, {
    body: {
      ...trimmed.body,
      spec: { ...trimmed.body.spec, versions: [trimmed.body.spec.versions[0]] },
    },
  });
  assertEquals(gone.status, 200, JSON.stringify(gone.body));
  assertEquals(gone.body.spec.versions.map((v: any) => v.name), ["v1beta1"]);

  const refused = async (change: (c: any) => void) => {
    const c = gadgetsCrd();
    c.metadata.name = "others.versions.example.com";
    c.spec.names = { plural: "others", kind: "Other" };
    change(c);
    const res = await t.json("POST", CRDS, { body: c });
    assertEquals(res.status, 422, JSON.stringify(res.body));
    return res.body.details.causes.map((x: any) => `${x.field}: ${x.message}`);
  };
  const both = await refused((c) => (c.spec.versions[0].storage = true));
  assertEquals(both.length, 1);
  assertMatch(
    both[0],
    /^spec.versions: Invalid value: .*must have exactly one version marked as storage version$/,
  );
  assertEquals(await refused((c) => (c.spec.conversion = { strategy: "Webhook" })), [
    "spec.conversion.webhook: Required value: required when strategy is set to Webhook",
  ]);
  assertEquals(
    await refused((c) =>
      c.spec.conversion = {
        strategy: "Webhook",
        webhook: {
          conversionReviewVersions: ["v1"],
          clientConfig: { service: { name: "conv", namespace: "default" } },
        },
      }
    ),
    [
      "spec.conversion.webhook.clientConfig.caBundle: Required value: required with service: the service's certificate is checked against it",
    ],
  );
  assertEquals(
    await refused((c) =>
      c.spec.conversion = {
        strategy: "Webhook",
        webhook: { conversionReviewVersions: ["v2"], clientConfig: { url: "http://x.example/c" } },
      }
    ),
    [
      `spec.conversion.webhook.clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme`,
      `spec.conversion.webhook.conversionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1`,
    ],
  );
});

Deno.test("CRD versions: a conversion webhook converts reads, lists and writes", async () => {
  await using hook = await startTestWebhook();
  hook.respond = convertColour;
  await using t = await testServer();
  const v1 = "/apis/conv.example.com/v1/namespaces/default/things";
  const beta = "/apis/conv.example.com/v1beta1/namespaces/default/things";
  await createCrd(t, thingsCrd(hook), beta);

  // Each version has its own schema in OpenAPI.
  for (const [version, field] of [["v1", "color"], ["v1beta1", "colour"]]) {
    const doc = await t.json("GET", `/openapi/v3/apis/conv.example.com/${version}`);
    assertEquals(doc.status, 200);
    const thing = doc.body.components.schemas[`com.example.conv.${version}.Thing`];
    assertEquals(Object.keys(thing.properties.spec.properties), [field]);
  }

  // Stored in v1, the storage version: no call.
  for (const [name, color] of [["a", "red"], ["b", "green"], ["c", "blue"]]) {
    const res = await t.json("POST", v1, {
      body: obj("conv.example.com/v1", "Thing", name, { color }),
    });
    assertEquals(res.status, 201, JSON.stringify(res.body));
  }
  assertEquals(hook.received.length, 0);

  // The three objects of a list: one call.
  const list = await t.json("GET", beta);
  assertEquals(list.status, 200, JSON.stringify(list.body));
  assertEquals(list.body.items.map((o: any) => o.spec.colour), ["red", "green", "blue"]);
  assertEquals(hook.received.length, 1);
  const sent = hook.received[0];
  assertEquals(sent.path, "/convert");
  assertEquals(sent.review.kind, "ConversionReview");
  assertEquals(sent.review.apiVersion, "apiextensions.platform.io/v1");
  assertEquals(sent.review.request.desiredAPIVersion, "conv.example.com/v1beta1");
  assertEquals(sent.review.request.objects.map((o: any) => o.spec), [
    { color: "red" },
    { color: "green" },
    { color: "blue" },
  ]);

  // A stored value is converted once: a get of an unchanged object calls no more.
  const got = await t.json("GET", `${beta}/a`);
  assertEquals([got.body.apiVersion, got.body.spec], ["conv.example.com/v1beta1", {
    colour: "red",
  }]);
  assertEquals(hook.received.length, 1);

  // Written in v1beta1: converted to v1 before it is stored.
  const made = await t.json("POST", beta, {
    body: obj("conv.example.com/v1beta1", "Thing", "d", { colour: "black" }),
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  assertEquals(made.body.spec, { colour: "black" });
  const stored = await t.json("GET", `${v1}/d`);
  assertEquals([stored.body.apiVersion, stored.body.spec], ["conv.example.com/v1", {
    color: "black",
  }]);

  // A watch in v1beta1.
  await using w = await openWatch(
    t,
    `${beta}?watch=true&resourceVersion=${stored.body.metadata.resourceVersion}`,
  );
  await t.json("POST", v1, { body: obj("conv.example.com/v1", "Thing", "e", { color: "white" }) });
  const ev = await w.next(10_000);
  assertEquals([ev.type, ev.object.apiVersion, ev.object.spec], [
    "ADDED",
    "conv.example.com/v1beta1",
    { colour: "white" },
  ]);
});

Deno.test("CRD versions: a failing conversion webhook is a 500 and stores nothing", async () => {
  await using hook = await startTestWebhook();
  hook.respond = convertColour;
  await using t = await testServer();
  const v1 = "/apis/conv.example.com/v1/namespaces/default/things";
  const beta = "/apis/conv.example.com/v1beta1/namespaces/default/things";
  await createCrd(t, thingsCrd(hook), beta);
  const made = await t.json("POST", v1, {
    body: obj("conv.example.com/v1", "Thing", "a", { color: "red" }),
  });
  assertEquals(made.status, 201);

  hook.respond = (review) =>
    Response.json({
      apiVersion: review.apiVersion,
      kind: "ConversionReview",
      response: {
        uid: review.request.uid,
        result: { status: "Failure", message: "no colours today" },
      },
    });
  const failed = await t.json("GET", `${beta}/a`);
  assertEquals(failed.status, 500);
  assertEquals(failed.body.reason, "InternalError");
  assertEquals(
    failed.body.message,
    "Internal error occurred: conversion webhook for conv.example.com/v1, Kind=Thing failed: no colours today",
  );
  assertEquals((await t.json("GET", beta)).status, 500);

  // A write through v1beta1 fails before anything is stored.
  const put = await t.json("PUT", `${beta}/a`, {
    body: { ...obj("conv.example.com/v1beta1", "Thing", "a", { colour: "pink" }) },
  });
  assertEquals(put.status, 500, JSON.stringify(put.body));
  const create = await t.json("POST", beta, {
    body: obj("conv.example.com/v1beta1", "Thing", "b", { colour: "pink" }),
  });
  assertEquals(create.status, 500);
  assertEquals((await t.json("GET", `${v1}/b`)).status, 404);

  // A watch in v1beta1 ends with an ERROR event carrying the same Status.
  await using w = await openWatch(
    t,
    `${beta}?watch=true&resourceVersion=${made.body.metadata.resourceVersion}`,
  );
  await t.json("POST", v1, { body: obj("conv.example.com/v1", "Thing", "c", { color: "red" }) });
  const ev = await w.next(10_000);
  assertEquals([ev.type, ev.object.code, ev.object.message], [
    "ERROR",
    500,
    "Internal error occurred: conversion webhook for conv.example.com/v1, Kind=Thing failed: no colours today",
  ]);

  // The webhook down: kube's message names the call.
  hook.respond = () => new Response("down", { status: 503 });
  const down = await t.json("GET", `${beta}/a`);
  assertEquals(down.status, 500);
  assertMatch(
    down.body.message,
    /^Internal error occurred: conversion webhook for conv.example.com\/v1, Kind=Thing failed: Post "https:\/\/127.0.0.1:\d+\/convert\?timeout=30s": the server responded with the status code 503/,
  );

  // The stored object is untouched, and reads in the storage version need no webhook.
  const still = await t.json("GET", `${v1}/a`);
  assertEquals([still.body.spec, still.body.metadata.resourceVersion], [
    { color: "red" },
    made.body.metadata.resourceVersion,
  ]);
});

// ---- server-side apply across versions (shared/conformance/ssa-behaviours.md) ----

/** The Widget CRD of the SSA catalogue (testdata/crd/widgets.yaml) with its v2: the same
 * schema, `None` conversion (ssa-behaviours.md §0.1). */
function widgetsCrd(): any {
  const crd = parse(widgetsYaml) as any;
  crd.spec.versions.push({ ...structuredClone(crd.spec.versions[0]), name: "v2", storage: false });
  return crd;
}
const widgetsYaml = await Deno.readTextFile(
  new URL("../testdata/crd/widgets.yaml", import.meta.url),
);

const widgets = (v: string) => `/apis/ssa.example.com/${v}/namespaces/default/widgets`;

function apply(t: TestServer, version: string, manager: string, spec: unknown) {
  return t.json("PATCH", `${widgets(version)}/w?fieldManager=${manager}`, {
    headers: { "Content-Type": "application/apply-patch+yaml" },
    body: JSON.stringify(obj(`ssa.example.com/${version}`, "Widget", "w", spec)),
  });
}

/** UPDATE@version(manager, spec): GET, replace spec, PUT back (POST when missing). */
async function update(t: TestServer, version: string, manager: string, spec: unknown) {
  const live = await t.json("GET", `${widgets(version)}/w`);
  if (live.status === 404) {
    return t.json("POST", `${widgets(version)}?fieldManager=${manager}`, {
      body: obj(`ssa.example.com/${version}`, "Widget", "w", spec),
    });
  }
  return t.json("PUT", `${widgets(version)}/w?fieldManager=${manager}`, {
    body: { ...live.body, spec },
  });
}

const entries = (o: any) =>
  o.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.apiVersion, e.fieldsV1]);

Deno.test("CRD versions: SSA S4, one Apply entry per manager across versions", async () => {
  await using t = await testServer();
  await createCrd(t, widgetsCrd(), widgets("v2"));
  assertEquals((await apply(t, "v1", "default", { numeric: 1, string: "string" })).status, 201);
  const res = await apply(t, "v2", "default", { numeric: 2, string: "string", bool: false });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  assertEquals(res.body.spec, { numeric: 2, string: "string", bool: false });
  assertEquals(entries(res.body), [[
    "default",
    "Apply",
    "ssa.example.com/v2",
    { "f:spec": { "f:bool": {}, "f:numeric": {}, "f:string": {} } },
  ]]);
  // Removal across versions: a v1 apply that omits fields deletes them.
  const back = await apply(t, "v1", "default", { numeric: 3 });
  assertEquals(back.body.spec, { numeric: 3 });
  assertEquals(entries(back.body), [[
    "default",
    "Apply",
    "ssa.example.com/v1",
    { "f:spec": { "f:numeric": {} } },
  ]]);
});

Deno.test("CRD versions: SSA S36, managers at a version no longer served are dropped", async () => {
  await using t = await testServer();
  await createCrd(t, widgetsCrd(), widgets("v2"));
  assertEquals((await apply(t, "v1", "default", { set: ["a", "b", "c", "d"] })).status, 201);
  // v1 stops being served (it stays the storage version).
  const path = `${CRDS}/widgets.ssa.example.com`;
  const crd = (await t.json("GET", path)).body;
  crd.spec.versions[0].served = false;
  assertEquals((await t.json("PUT", path, { body: crd })).status, 200);
  await until(async () => (await t.json("GET", widgets("v1"))).status === 404, "v1 unserved");

  const res = await apply(t, "v2", "default", { set: ["a"] });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  // The v1 entry is gone without pruning anything.
  assertEquals(res.body.spec, { set: ["a", "b", "c", "d"] });
  assertEquals(entries(res.body), [[
    "default",
    "Apply",
    "ssa.example.com/v2",
    { "f:spec": { "f:set": { 'v:"a"': {} } } },
  ]]);
});

Deno.test("CRD versions: SSA cross-version variants (S5, S7, S20, S22, S23, S29)", async (st) => {
  await using t = await testServer();
  await createCrd(t, widgetsCrd(), widgets("v2"));
  const fresh = async () => {
    const del = await t.json("DELETE", `${widgets("v1")}/w`);
    assert(del.status === 200 || del.status === 404, JSON.stringify(del.body));
  };
  const ok = (r: { status: number; body: any }) => {
    assert(r.status === 200 || r.status === 201, JSON.stringify(r.body));
    return r.body;
  };

  await st.step("S5: the update @v2 owns what it added, recorded at v2", async () => {
    await fresh();
    ok(await apply(t, "v1", "default", { numeric: 1, string: "string" }));
    ok(await update(t, "v2", "controller", { numeric: 1, string: "string", bool: true }));
    const res = ok(await apply(t, "v1", "default", { numeric: 2, string: "string" }));
    assertEquals(res.spec, { numeric: 2, string: "string", bool: true });
    assertEquals(entries(res), [
      ["default", "Apply", "ssa.example.com/v1", { "f:spec": { "f:numeric": {}, "f:string": {} } }],
      ["controller", "Update", "ssa.example.com/v2", { "f:spec": { "f:bool": {} } }],
    ]);
  });

  await st.step("S7: the conflict names the updater's version", async () => {
    await fresh();
    ok(await apply(t, "v1", "default", { numeric: 1, string: "string" }));
    ok(
      await update(t, "v2", "controller", { numeric: 1, string: "controller string", bool: true }),
    );
    const res = await apply(t, "v1", "default", { numeric: 2, string: "user string" });
    assertEquals(res.status, 409);
    assertEquals(
      res.body.message,
      'Apply failed with 1 conflict: conflict with "controller" using ssa.example.com/v2: .spec.string',
    );
  });

  await st.step("S20: set members of an updater @v2 merge", async () => {
    await fresh();
    ok(await apply(t, "v1", "default", { set: ["a", "c"] }));
    ok(await update(t, "v2", "controller", { set: ["a", "b", "c", "d"] }));
    const res = ok(await apply(t, "v1", "default", { set: ["a", "aprime", "c", "cprime"] }));
    assertEquals(res.spec.set, ["a", "b", "aprime", "c", "d", "cprime"]);
  });

  await st.step("S22: an updater @v2 that only reorders gains nothing", async () => {
    await fresh();
    ok(await apply(t, "v1", "default", { set: ["a", "b", "c", "d"] }));
    const reordered = ok(await update(t, "v2", "controller", { set: ["a", "d", "c", "b"] }));
    assertEquals(entries(reordered).map((e: any) => e[0]), ["default"]);
    const res = ok(await apply(t, "v2", "default", { set: ["a", "b", "c", "d"] }));
    assertEquals(res.spec.set, ["a", "b", "c", "d"]);
  });

  await st.step("S23: members dropped by their applier @v2 are removed", async () => {
    await fresh();
    ok(await apply(t, "v1", "default", { set: ["a", "b", "c", "d"] }));
    const res = ok(await apply(t, "v2", "default", { set: ["a", "c"] }));
    assertEquals(res.spec.set, ["a", "c"]);
  });

  await st.step("S29: several conflicts with an updater @v2", async () => {
    await fresh();
    ok(
      await apply(t, "v1", "default", {
        free: { a: 1, b: { c: { d: 2, e: [1, 2, 3], f: [{ name: "n", value: 1 }] } } },
      }),
    );
    ok(
      await update(t, "v2", "controller", {
        free: { a: 1, b: { c: { d: 3, e: [1, 2, 3, 4], f: [{ name: "n", value: 2 }] } }, g: 5 },
      }),
    );
    const res = await apply(t, "v1", "default", {
      free: { a: 2, b: { c: { d: 2, e: [3, 2, 1], f: [{ name: "n", value: 1 }] } } },
    });
    assertEquals(res.status, 409);
    assertEquals(
      res.body.message,
      'Apply failed with 3 conflicts: conflicts with "controller" using ssa.example.com/v2:\n' +
        "- .spec.free.b.c.d\n- .spec.free.b.c.e\n- .spec.free.b.c.f",
    );
    assertEquals(res.body.details.causes.length, 3);
  });
});

Deno.test({
  name: "kubectl: a CRD with two versions and a conversion webhook",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using hook = await startTestWebhook();
  hook.respond = convertColour;
  await using env = await kubectlEnv();
  const { ok } = env;
  // Written under Kubernetes' group name: the webhook gets kube's ConversionReview spelling.
  const crd = { ...thingsCrd(hook), apiVersion: "apiextensions.k8s.io/v1" };
  await ok(["apply", "-f", "-"], JSON.stringify(crd));
  await ok(["wait", "--for=condition=Established", "crd/things.conv.example.com", "--timeout=20s"]);
  const thing = `apiVersion: conv.example.com/v1
kind: Thing
metadata: {name: t1, namespace: default}
spec: {color: red}
`;
  assertMatch(await ok(["apply", "-f", "-"], thing), /^thing.conv.example.com\/t1 created\n$/);
  const beta = JSON.parse(await ok(["get", "things.v1beta1.conv.example.com", "t1", "-o", "json"]));
  assertEquals([beta.apiVersion, beta.spec], ["conv.example.com/v1beta1", { colour: "red" }]);
  const v1 = JSON.parse(await ok(["get", "things.v1.conv.example.com", "t1", "-o", "json"]));
  assertEquals([v1.apiVersion, v1.spec], ["conv.example.com/v1", { color: "red" }]);
  assert(hook.received.length >= 1, "the webhook was called");
  assertEquals(hook.received[0].review.apiVersion, "apiextensions.k8s.io/v1");
});

Deno.test("CRD versions: a webhook's rule for a version served later matches the other version's writes (matchPolicy Equivalent)", async () => {
  await using hook = await startTestWebhook();
  await using t = await testServer();
  const v1 = "/apis/versions.example.com/v1/namespaces/default/gadgets";
  const beta = "/apis/versions.example.com/v1beta1/namespaces/default/gadgets";
  const crd = gadgetsCrd();
  const betaVersion = crd.spec.versions.shift(); // v1 only, for now
  await createCrd(t, crd, v1);
  const config = configMapCreateWebhook("ValidatingWebhookConfiguration", "gadgets", hook);
  config.webhooks[0].rules = [{
    operations: ["CREATE"],
    apiGroups: ["versions.example.com"],
    apiVersions: ["v1beta1"],
    resources: ["gadgets"],
  }];
  const made = await t.json("POST", `${ADMISSION}/validatingwebhookconfigurations`, {
    body: config,
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  const create = (name: string) =>
    t.json("POST", v1, { body: obj("versions.example.com/v1", "Gadget", name, { size: 1 }) });

  // v1beta1 is not served: nothing is equivalent to the rule's resource.
  assertEquals((await create("g1")).status, 201);
  assertEquals(hook.received.length, 0);

  const live = (await t.json("GET", `${CRDS}/gadgets.versions.example.com`)).body;
  live.spec.versions.unshift(betaVersion);
  const updated = await t.json("PUT", `${CRDS}/gadgets.versions.example.com`, { body: live });
  assertEquals(updated.status, 200, JSON.stringify(updated.body));
  await until(async () => (await t.json("GET", beta)).status === 200, `${beta} served`);

  // Now a v1 create is sent as its v1beta1 equivalent.
  assertEquals((await create("g2")).status, 201);
  assertEquals(hook.received.length, 1);
  const { request } = hook.received[0].review;
  assertEquals(request.resource.version, "v1beta1");
  assertEquals(request.requestResource.version, "v1");
  assertEquals([request.object.apiVersion, request.object.metadata.name], [
    "versions.example.com/v1beta1",
    "g2",
  ]);
});
