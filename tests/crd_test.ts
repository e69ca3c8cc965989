// deno-lint-ignore-file no-explicit-any
/**
 * Custom resources over real HTTPS: CustomResourceDefinitions are validated, established and
 * served at runtime; their objects are validated, pruned and stored like built-in ones;
 * deleting a CRD deletes its objects and its endpoints; everything survives a restart.
 */

import assert from "node:assert/strict";
import { parse } from "yaml";
import { type TestServer, testServer } from "./harness.ts";
import { openWatch } from "./watch_client.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const WIDGETS_CRD = "widgets.ssa.example.com";
const WIDGETS = "/apis/ssa.example.com/v1/namespaces/default/widgets";
const widgetsCrd = parse(
  await Deno.readTextFile(new URL("../testdata/crd/widgets.yaml", import.meta.url)),
);

/** A cluster-scoped CRD without a status subresource. */
const gadgetsCrd = {
  apiVersion: "apiextensions.platform.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.ops.example.com" },
  spec: {
    group: "ops.example.com",
    scope: "Cluster",
    names: {
      plural: "gadgets",
      kind: "Gadget",
      shortNames: ["gd"],
      categories: ["all-gadgets"],
    },
    versions: [{
      name: "v1alpha1",
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: {
              type: "object",
              required: ["size"],
              properties: {
                size: { type: "integer", minimum: 1, maximum: 10 },
                color: { type: "string", enum: ["red", "blue"] },
                label: { type: "string", maxLength: 5, pattern: "^[a-z]+$" },
                port: { "x-kubernetes-int-or-string": true },
                template: {
                  type: "object",
                  "x-kubernetes-embedded-resource": true,
                  "x-kubernetes-preserve-unknown-fields": true,
                },
              },
            },
            status: { type: "object", properties: { ready: { type: "boolean" } } },
          },
        },
      },
    }],
  },
};

function widget(name: string, spec: Record<string, unknown> = {}, extra: any = {}) {
  return { apiVersion: "ssa.example.com/v1", kind: "Widget", metadata: { name }, spec, ...extra };
}

function condition(crd: any, type: string): any {
  return (crd.status?.conditions ?? []).find((c: any) => c.type === type);
}

/** Polls the CRD until `done` holds (or fails after a few seconds). */
async function waitCrd(t: TestServer, name: string, done: (crd: any, status: number) => boolean) {
  let last: any;
  for (let i = 0; i < 100; i++) {
    const res = await t.json("GET", `${CRDS}/${name}`);
    last = res;
    if (done(res.body, res.status)) return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`CRD ${name} never got there: ${JSON.stringify(last?.body)}`);
}

async function createEstablished(t: TestServer, crd: any): Promise<any> {
  const res = await t.json("POST", CRDS, { body: crd });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return await waitCrd(
    t,
    crd.metadata.name,
    (c) => condition(c, "Established")?.status === "True",
  );
}

Deno.test("crd: a CustomResourceDefinition is established and shows in discovery and OpenAPI", async () => {
  await using t = await testServer();
  const crd = await createEstablished(t, widgetsCrd);
  assert.deepEqual(crd.status.acceptedNames, {
    plural: "widgets",
    singular: "widget",
    kind: "Widget",
    listKind: "WidgetList",
  });
  assert.deepEqual(crd.status.storedVersions, ["v1"]);
  const accepted = condition(crd, "NamesAccepted");
  assert.deepEqual([accepted.status, accepted.reason, accepted.message], [
    "True",
    "NoConflicts",
    "no conflicts found",
  ]);
  const established = condition(crd, "Established");
  assert.deepEqual([established.reason, established.message], [
    "InitialNamesAccepted",
    "the initial names have been accepted",
  ]);
  assert.equal(crd.spec.conversion.strategy, "None");

  const groups = await t.json("GET", "/apis");
  const group = groups.body.groups.find((g: any) => g.name === "ssa.example.com");
  assert.deepEqual(group.preferredVersion, { groupVersion: "ssa.example.com/v1", version: "v1" });
  const apiGroup = await t.json("GET", "/apis/ssa.example.com");
  assert.equal(apiGroup.status, 200);
  const resources = await t.json("GET", "/apis/ssa.example.com/v1");
  assert.deepEqual(resources.body.resources.map((r: any) => r.name), ["widgets", "widgets/status"]);
  assert.deepEqual(resources.body.resources[0].singularName, "widget");
  assert.deepEqual(resources.body.resources[0].namespaced, true);

  // The CRD resource itself.
  const ext = await t.json("GET", "/apis/apiextensions.platform.io/v1");
  const crdRes = ext.body.resources.find((r: any) => r.name === "customresourcedefinitions");
  assert.deepEqual(crdRes.shortNames, ["crd", "crds"]);
  assert.deepEqual(crdRes.categories, ["api-extensions"]);
  assert.equal(crdRes.namespaced, false);

  const aggregated = await t.json("GET", "/apis", {
    headers: { Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" },
  });
  const item = aggregated.body.items.find((i: any) => i.metadata.name === "ssa.example.com");
  assert.equal(item.versions[0].resources[0].resource, "widgets");
  assert.equal(item.versions[0].resources[0].subresources[0].subresource, "status");

  const index = await t.json("GET", "/openapi/v3");
  assert.ok(index.body.paths["apis/ssa.example.com/v1"]);
  const doc = await t.json("GET", "/openapi/v3/apis/ssa.example.com/v1");
  const schema = doc.body.components.schemas["com.example.ssa.v1.Widget"];
  assert.deepEqual(schema["x-kubernetes-group-version-kind"], [
    { group: "ssa.example.com", kind: "Widget", version: "v1" },
  ]);
  assert.equal(schema.properties.spec.properties.set["x-kubernetes-list-type"], "set");
  assert.ok(doc.body.components.schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]);
  assert.ok(doc.body.paths["/apis/ssa.example.com/v1/namespaces/{namespace}/widgets/{name}"]);
  const v2 = await t.json("GET", "/openapi/v2");
  assert.ok(v2.body.definitions["com.example.ssa.v1.Widget"]);
  assert.ok(v2.body.paths["/apis/ssa.example.com/v1/namespaces/{namespace}/widgets"]);
});

Deno.test("crd: widgets CRUD, list and watch in a namespace", async () => {
  await using t = await testServer();
  await createEstablished(t, widgetsCrd);
  await using watch = await openWatch(t, `${WIDGETS}?watch=true`);
  assert.equal(watch.status, 200);

  const created = await t.json("POST", WIDGETS, {
    body: widget("w1", { numeric: 1, string: "a", set: ["x", "y"] }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.metadata.namespace, "default");
  assert.equal(created.body.metadata.generation, 1);
  assert.match(created.body.metadata.uid, /^[0-9a-f-]{36}$/);
  const added = await watch.next();
  assert.deepEqual([added.type, added.object.metadata.name], ["ADDED", "w1"]);

  const got = await t.json("GET", `${WIDGETS}/w1`);
  assert.deepEqual(got.body.spec, { numeric: 1, string: "a", set: ["x", "y"] });

  const updated = await t.json("PUT", `${WIDGETS}/w1`, {
    body: { ...got.body, spec: { ...got.body.spec, numeric: 2 } },
  });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.spec.numeric, 2);
  assert.equal(updated.body.metadata.generation, 2);
  assert.equal((await watch.next()).type, "MODIFIED");

  const merged = await t.json("PATCH", `${WIDGETS}/w1`, {
    body: { spec: { bool: true } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assert.equal(merged.status, 200);
  assert.equal(merged.body.spec.bool, true);
  assert.equal((await watch.next()).type, "MODIFIED");

  // Strategic merge patch is for built-in kinds only.
  const smp = await t.json("PATCH", `${WIDGETS}/w1`, {
    body: { spec: { bool: false } },
    headers: { "Content-Type": "application/strategic-merge-patch+json" },
  });
  assert.equal(smp.status, 415);

  await t.json("POST", WIDGETS, { body: widget("w2") });
  const list = await t.json("GET", WIDGETS);
  assert.equal(list.body.kind, "WidgetList");
  assert.equal(list.body.apiVersion, "ssa.example.com/v1");
  assert.deepEqual(list.body.items.map((i: any) => i.metadata.name), ["w1", "w2"]);
  const all = await t.json("GET", "/apis/ssa.example.com/v1/widgets");
  assert.equal(all.body.items.length, 2);

  // No protobuf for custom resources: JSON is served when the client also accepts it.
  const json = await t.request("GET", `${WIDGETS}/w1`, {
    headers: { Accept: "application/vnd.platform.protobuf, application/json" },
  });
  assert.match(json.headers.get("Content-Type") ?? "", /^application\/json/);
  await json.body?.cancel();

  const del = await t.json("DELETE", `${WIDGETS}/w1`);
  assert.equal(del.status, 200);
  const events = await watch.collect(500, 2);
  assert.deepEqual(events.map((e) => e.type), ["ADDED", "DELETED"]);
  assert.equal((await t.json("GET", `${WIDGETS}/w1`)).status, 404);
});

Deno.test("crd: unknown fields are pruned and reported per fieldValidation; preserve-unknown is kept", async () => {
  await using t = await testServer();
  await createEstablished(t, widgetsCrd);
  const body = () =>
    widget("w1", {
      numeric: 1,
      bogus: true,
      struct: { name: "n", extra: 1 },
      free: { any: { x: 1 } },
    }, {
      top: "level",
    });

  const strict = await t.json("POST", `${WIDGETS}?fieldValidation=Strict`, { body: body() });
  assert.equal(strict.status, 400);
  assert.match(strict.body.message, /strict decoding error: /);
  assert.match(strict.body.message, /unknown field "spec.bogus"/);
  assert.match(strict.body.message, /unknown field "spec.struct.extra"/);
  assert.match(strict.body.message, /unknown field "top"/);

  const warned = await t.json("POST", WIDGETS, { body: body() });
  assert.equal(warned.status, 201);
  const warning = warned.headers.get("Warning") ?? "";
  assert.match(warning, /unknown field \\"spec.bogus\\"/);
  assert.deepEqual(warned.body.spec, {
    numeric: 1,
    struct: { name: "n" },
    free: { any: { x: 1 } },
  });
  assert.equal(warned.body.top, undefined);
  const stored = await t.json("GET", `${WIDGETS}/w1`);
  assert.deepEqual(stored.body.spec, warned.body.spec);

  const ignored = await t.json("POST", `${WIDGETS}?fieldValidation=Ignore`, {
    body: { ...body(), metadata: { name: "w2", madeUp: 1 } },
  });
  assert.equal(ignored.status, 201);
  assert.equal(ignored.headers.get("Warning"), null);
  assert.equal(ignored.body.spec.bogus, undefined);
  assert.equal(ignored.body.metadata.madeUp, undefined);
});

Deno.test("crd: schema validation answers 422 with field paths", async () => {
  await using t = await testServer();
  await createEstablished(t, widgetsCrd);
  const bad = await t.json("POST", WIDGETS, {
    body: widget("w1", {
      numeric: "one",
      list: [{ value: 1 }, { name: "a" }, { name: "a" }],
      set: ["x", "x"],
    }),
  });
  assert.equal(bad.status, 422, JSON.stringify(bad.body));
  assert.equal(bad.body.reason, "Invalid");
  assert.equal(bad.body.details.kind, "Widget");
  assert.equal(bad.body.details.group, "ssa.example.com");
  assert.deepEqual(bad.body.details.causes.map((c: any) => [c.reason, c.field]), [
    ["FieldValueTypeInvalid", "spec.numeric"],
  ]);
  // Types first (as decoding would fail); then everything else at once.
  const more = await t.json("POST", WIDGETS, {
    body: widget("w1", { list: [{ value: 1 }, { name: "a" }, { name: "a" }], set: ["x", "x"] }),
  });
  assert.equal(more.status, 422);
  const causes = more.body.details.causes.map((c: any) => [c.reason, c.field]);
  assert.deepEqual(causes.sort(), [
    ["FieldValueDuplicate", "spec.list[2]"],
    ["FieldValueDuplicate", "spec.set[1]"],
    ["FieldValueRequired", "spec.list[0].name"],
  ]);
  assert.match(
    more.body.message,
    /^Widget.ssa.example.com "w1" is invalid: \[.*spec.set\[1\]: Duplicate value: "x"/,
  );
  assert.equal((await t.json("GET", `${WIDGETS}/w1`)).status, 404);
});

Deno.test("crd: status subresource: the main resource ignores status, /status changes only status", async () => {
  await using t = await testServer();
  await createEstablished(t, widgetsCrd);
  const created = await t.json("POST", WIDGETS, {
    body: widget("w1", { numeric: 1 }, { status: { phase: "Set by create" } }),
  });
  assert.equal(created.body.status, undefined);

  const put = await t.json("PUT", `${WIDGETS}/w1`, {
    body: { ...created.body, spec: { numeric: 2 }, status: { phase: "Main" } },
  });
  assert.equal(put.status, 200);
  assert.equal(put.body.status, undefined);
  assert.equal(put.body.spec.numeric, 2);

  const status = await t.json("PUT", `${WIDGETS}/w1/status`, {
    body: { ...put.body, spec: { numeric: 99 }, status: { phase: "Ready", observed: 2 } },
  });
  assert.equal(status.status, 200, JSON.stringify(status.body));
  assert.deepEqual(status.body.status, { phase: "Ready", observed: 2 });
  assert.equal(status.body.spec.numeric, 2);
  assert.equal(status.body.metadata.generation, 2);

  const badStatus = await t.json("PUT", `${WIDGETS}/w1/status`, {
    body: { ...status.body, status: { observed: "many" } },
  });
  assert.equal(badStatus.status, 422);
  assert.equal(badStatus.body.details.causes[0].field, "status.observed");

  const patched = await t.json("PATCH", `${WIDGETS}/w1/status`, {
    body: { status: { phase: "Done" } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assert.deepEqual(patched.body.status, { phase: "Done", observed: 2 });
  const got = await t.json("GET", `${WIDGETS}/w1/status`);
  assert.equal(got.body.status.phase, "Done");
  assert.equal(got.body.spec.numeric, 2);
});

Deno.test("crd: a cluster-scoped CRD with value validations, int-or-string and embedded resources", async () => {
  await using t = await testServer();
  const crd = await createEstablished(t, gadgetsCrd);
  assert.deepEqual(crd.status.acceptedNames, {
    plural: "gadgets",
    singular: "gadget",
    kind: "Gadget",
    listKind: "GadgetList",
    shortNames: ["gd"],
    categories: ["all-gadgets"],
  });
  const base = "/apis/ops.example.com/v1alpha1/gadgets";
  const discovery = await t.json("GET", "/apis/ops.example.com/v1alpha1");
  assert.deepEqual(discovery.body.resources, [{
    name: "gadgets",
    singularName: "gadget",
    namespaced: false,
    kind: "Gadget",
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    shortNames: ["gd"],
    categories: ["all-gadgets"],
  }]);
  const gadget = (name: string, spec: any) => ({
    apiVersion: "ops.example.com/v1alpha1",
    kind: "Gadget",
    metadata: { name },
    spec,
  });
  const ok = await t.json("POST", base, {
    body: gadget("g1", {
      size: 3,
      port: "http",
      template: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p", bogus: 1 },
        spec: { a: 1 },
      },
    }),
  });
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  assert.equal(ok.body.metadata.namespace, undefined);
  assert.deepEqual(ok.body.spec.template, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: { a: 1 },
  });
  assert.equal(
    (await t.json("POST", base, { body: gadget("g2", { size: 4, port: 8080 }) })).status,
    201,
  );
  // No status subresource: the main resource writes status.
  const withStatus = await t.json("PUT", `${base}/g2`, {
    body: { ...gadget("g2", { size: 4, port: 8080 }), status: { ready: true } },
  });
  assert.equal(withStatus.status, 200);
  assert.deepEqual(withStatus.body.status, { ready: true });
  // Without a status subresource, status is part of what generation counts.
  assert.equal(withStatus.body.metadata.generation, 2);
  assert.equal((await t.json("GET", `${base}/g2/status`)).status, 404);
  assert.equal(
    (await t.json("GET", "/apis/ops.example.com/v1alpha1/namespaces/default/gadgets")).status,
    404,
  );

  const bad = await t.json("POST", base, {
    body: gadget("g3", {
      size: 11,
      color: "green",
      label: "TooLong",
      port: 1.5,
      template: { metadata: { name: "x" } },
    }),
  });
  assert.equal(bad.status, 422);
  const bad2 = await t.json("POST", base, {
    body: gadget("g3", { size: 0, color: "green", label: "UPPER", template: { kind: "" } }),
  });
  assert.equal(bad2.status, 422, JSON.stringify(bad2.body));
  const byField = Object.fromEntries(
    bad2.body.details.causes.map((c: any) => [c.field, `${c.reason}: ${c.message}`]),
  );
  assert.deepEqual(byField, {
    "spec.size":
      "FieldValueInvalid: Invalid value: 0: spec.size in body should be greater than or equal to 1",
    "spec.color":
      'FieldValueNotSupported: Unsupported value: "green": supported values: "red", "blue"',
    "spec.label":
      `FieldValueInvalid: Invalid value: "UPPER": spec.label in body should match '^[a-z]+$'`,
    "spec.template.apiVersion": "FieldValueRequired: Required value: must not be empty",
    "spec.template.kind": "FieldValueRequired: Required value: must not be empty",
  });
  const types = bad.body.details.causes.map((c: any) => c.field);
  assert.deepEqual(types, ["spec.port"]);
  const long = await t.json("POST", base, { body: gadget("g3", { size: 1, label: "abcdef" }) });
  assert.equal(long.body.details.causes[0].message, "Too long: may not be more than 5 bytes");
  const missing = await t.json("POST", base, { body: gadget("g3", {}) });
  assert.deepEqual(missing.body.details.causes.map((c: any) => [c.reason, c.field]), [
    ["FieldValueRequired", "spec.size"],
  ]);
});

Deno.test("crd: invalid CustomResourceDefinitions are refused with 422", async () => {
  await using t = await testServer();
  const post = async (mutate: (crd: any) => void) => {
    const crd = structuredClone(widgetsCrd);
    mutate(crd);
    const res = await t.json("POST", CRDS, { body: crd });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.details.kind, "CustomResourceDefinition");
    return res.body.details.causes.map((c: any) => `${c.field}: ${c.message}`);
  };
  assert.deepEqual(await post((c) => (c.metadata.name = "gizmos.ssa.example.com")), [
    `metadata.name: Invalid value: "gizmos.ssa.example.com": must be spec.names.plural+"."+spec.group`,
  ]);
  assert.deepEqual(
    await post((c) => {
      c.metadata.name = "widgets.example";
      c.spec.group = "example";
    }),
    ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
  );
  assert.deepEqual(await post((c) => delete c.spec.names.plural), [
    "spec.names.plural: Required value",
    `metadata.name: Invalid value: "widgets.ssa.example.com": must be spec.names.plural+"."+spec.group`,
  ]);
  assert.deepEqual(await post((c) => delete c.spec.names.kind), [
    "spec.names.kind: Required value",
  ]);
  assert.deepEqual(await post((c) => (c.spec.scope = "Global")), [
    'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
  ]);
  assert.deepEqual(await post((c) => (c.spec.versions[0].storage = false)), [
    `spec.versions: Invalid value: ${
      JSON.stringify([{ ...widgetsCrd.spec.versions[0], storage: false }])
    }: must have exactly one version marked as storage version`,
  ]);
  // Two storage versions (several versions are served: tests/crd_versions_test.ts).
  const two = await post((c) => c.spec.versions.push({ ...c.spec.versions[0], name: "v2" }));
  assert.equal(two.length, 1);
  assert.match(
    two[0],
    /^spec.versions: Invalid value: .*: must have exactly one version marked as storage version$/,
  );
  assert.deepEqual(await post((c) => delete c.spec.versions[0].schema), [
    "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
  ]);
  assert.deepEqual(
    await post((c) => delete c.spec.versions[0].schema.openAPIV3Schema.properties.spec.type),
    [
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
    ],
  );
  assert.deepEqual(
    await post((c) => (c.spec.versions[0].schema.openAPIV3Schema.type = "string")),
    [
      'spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root',
    ],
  );
  assert.deepEqual(
    await post((c) =>
      c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.numeric[
        "x-kubernetes-validations"
      ] = [{ rule: "self > 'a'" }]
    ),
    [
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[numeric].x-kubernetes-validations[0].rule: " +
      `Invalid value: {"rule":"self > 'a'"}: compilation failed: ERROR: <input>:1:6: ` +
      "found no matching overload for '_>_' applied to '(int, string)'\n | self > 'a'\n | .....^",
    ],
  );
  assert.deepEqual(
    await post((c) => (c.spec.versions[0].subresources.scale = {
      specReplicasPath: ".spec.numeric",
      statusReplicasPath: ".spec.observed",
    })),
    [
      'spec.versions[0].subresources.scale.statusReplicasPath: Invalid value: ".spec.observed": should be a json path under .status',
    ],
  );
  assert.equal((await t.json("GET", CRDS)).body.items.length, 0);
});

Deno.test("crd: names taken by another CRD are not accepted; built-in groups are not for CRDs", async () => {
  await using t = await testServer();
  await createEstablished(t, widgetsCrd);
  const sprockets = structuredClone(widgetsCrd);
  sprockets.metadata.name = "sprockets.ssa.example.com";
  sprockets.spec.names = { plural: "sprockets", kind: "Sprocket", shortNames: ["widget"] };
  assert.equal((await t.json("POST", CRDS, { body: sprockets })).status, 201);
  const blocked = await waitCrd(
    t,
    "sprockets.ssa.example.com",
    (c) => condition(c, "NamesAccepted")?.status === "False",
  );
  assert.deepEqual(
    [condition(blocked, "NamesAccepted").reason, condition(blocked, "NamesAccepted").message],
    ["ShortNamesConflict", '"widget" is already in use'],
  );
  assert.deepEqual(
    [condition(blocked, "Established").status, condition(blocked, "Established").reason],
    ["False", "NotAccepted"],
  );
  assert.equal(blocked.status.acceptedNames.shortNames, undefined);
  assert.equal(blocked.status.acceptedNames.plural, "sprockets");
  assert.equal(
    (await t.json("GET", "/apis/ssa.example.com/v1/namespaces/default/sprockets")).status,
    404,
  );

  // Fixing the names establishes it.
  const fixed = {
    ...blocked,
    spec: { ...blocked.spec, names: { ...blocked.spec.names, shortNames: ["sp"] } },
  };
  assert.equal(
    (await t.json("PUT", `${CRDS}/sprockets.ssa.example.com`, { body: fixed })).status,
    200,
  );
  await waitCrd(
    t,
    "sprockets.ssa.example.com",
    (c) => condition(c, "Established")?.status === "True",
  );
  assert.equal(
    (await t.json("GET", "/apis/ssa.example.com/v1/namespaces/default/sprockets")).status,
    200,
  );

  // A built-in group is not for CRDs at all (in either spelling): its names stay the
  // built-in resources'.
  const csr = structuredClone(widgetsCrd);
  csr.metadata.name = "certificatesigningrequests.certificates.platform.io";
  csr.spec.group = "certificates.platform.io";
  csr.spec.names = { plural: "certificatesigningrequests", kind: "Request" };
  const refused = await t.json("POST", CRDS, { body: csr });
  assert.equal(refused.status, 422);
  assert.deepEqual(refused.body.details.causes.map((c: any) => c.field), ["spec.group"]);
  const builtin = await t.json(
    "GET",
    "/apis/certificates.platform.io/v1/certificatesigningrequests",
  );
  assert.equal(builtin.body.kind, "CertificateSigningRequestList");
});

Deno.test("crd: deleting a CRD deletes its objects, then its endpoints", async () => {
  await using t = await testServer();
  await createEstablished(t, widgetsCrd);
  await t.json("POST", "/api/v1/namespaces", { body: { metadata: { name: "other" } } });
  for (const ns of ["default", "other"]) {
    for (const name of ["a", "b"]) {
      const res = await t.json("POST", `/apis/ssa.example.com/v1/namespaces/${ns}/widgets`, {
        body: widget(name),
      });
      assert.equal(res.status, 201);
    }
  }
  await using watch = await openWatch(t, "/apis/ssa.example.com/v1/widgets?watch=true");
  assert.equal((await watch.collect(300, 4)).length, 4);

  const del = await t.json("DELETE", `${CRDS}/${WIDGETS_CRD}`);
  assert.equal(del.status, 200);
  assert.ok(del.body.metadata.deletionTimestamp);
  assert.deepEqual(del.body.metadata.finalizers, [
    "customresourcecleanup.apiextensions.platform.io",
  ]);
  assert.equal(condition(del.body, "Terminating").reason, "InstanceDeletionPending");

  await waitCrd(t, WIDGETS_CRD, (_c, status) => status === 404);
  const deleted = await watch.collect(500, 4);
  assert.deepEqual(deleted.map((e) => e.type), ["DELETED", "DELETED", "DELETED", "DELETED"]);
  assert.equal((await t.json("GET", WIDGETS)).status, 404);
  assert.equal((await t.json("GET", "/apis/ssa.example.com/v1")).status, 404);
  const groups = await t.json("GET", "/apis");
  assert.ok(!groups.body.groups.some((g: any) => g.name === "ssa.example.com"));
  assert.equal(
    (await t.json("GET", "/openapi/v3")).body.paths["apis/ssa.example.com/v1"],
    undefined,
  );

  // The objects are really gone: a new CRD of the same name starts empty.
  await createEstablished(t, widgetsCrd);
  assert.deepEqual((await t.json("GET", "/apis/ssa.example.com/v1/widgets")).body.items, []);
});

Deno.test("crd: changing a CRD's schema changes what its objects may hold", async () => {
  await using t = await testServer();
  const crd = await createEstablished(t, gadgetsCrd);
  const base = "/apis/ops.example.com/v1alpha1/gadgets";
  const body = {
    apiVersion: "ops.example.com/v1alpha1",
    kind: "Gadget",
    metadata: { name: "g" },
    spec: { size: 1, weight: 3 },
  };
  const before = await t.json("POST", `${base}?dryRun=All`, { body: structuredClone(body) });
  assert.equal(before.body.spec.weight, undefined);
  const next = structuredClone(crd);
  next.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.weight = {
    type: "integer",
  };
  const put = await t.json("PUT", `${CRDS}/${crd.metadata.name}`, { body: next });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal(put.body.metadata.generation, 2);
  let after: any;
  for (let i = 0; i < 50; i++) {
    after = await t.json("POST", `${base}?dryRun=All`, { body: structuredClone(body) });
    if (after.body.spec?.weight === 3) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(after.body.spec.weight, 3);

  // The group and the plural name the stored objects: they never change.
  const moved = structuredClone(put.body);
  moved.spec.scope = "Namespaced";
  const immutable = await t.json("PUT", `${CRDS}/${crd.metadata.name}`, { body: moved });
  assert.equal(immutable.status, 422);
  assert.deepEqual(immutable.body.details.causes.map((c: any) => c.field), ["spec.scope"]);
  assert.match(immutable.body.details.causes[0].message, /field is immutable/);
});

Deno.test("crd: CRDs and their objects survive a restart (file storage)", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-crd-" });
  try {
    {
      await using t = await testServer({ dataDir, storage: "file" });
      await createEstablished(t, widgetsCrd);
      await createEstablished(t, gadgetsCrd);
      const res = await t.json("POST", WIDGETS, { body: widget("w1", { numeric: 7 }) });
      assert.equal(res.status, 201);
    }
    {
      await using t = await testServer({ dataDir, storage: "file" });
      // Served from the first request on, without waiting for the controller.
      const got = await t.json("GET", `${WIDGETS}/w1`);
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.equal(got.body.spec.numeric, 7);
      const gadgets = await t.json("GET", "/apis/ops.example.com/v1alpha1/gadgets");
      assert.equal(gadgets.status, 200);
      const bad = await t.json("POST", WIDGETS, { body: widget("w2", { numeric: "x" }) });
      assert.equal(bad.status, 422);
      const resources = await t.json("GET", "/apis/ssa.example.com/v1");
      assert.equal(resources.body.resources[0].name, "widgets");
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("crd: a CRD waits for objects with finalizers, refusing new ones, also across a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-crd-" });
  try {
    {
      await using t = await testServer({ dataDir, storage: "file" });
      await createEstablished(t, widgetsCrd);
      const held = widget("held");
      (held.metadata as any).finalizers = ["example.com/hold"];
      assert.equal((await t.json("POST", WIDGETS, { body: held })).status, 201);
      assert.equal((await t.json("POST", WIDGETS, { body: widget("free") })).status, 201);
      assert.equal((await t.json("DELETE", `${CRDS}/${WIDGETS_CRD}`)).status, 200);
      const waiting = await waitCrd(
        t,
        WIDGETS_CRD,
        (c) => condition(c, "Terminating")?.reason === "InstanceDeletionCheck",
      );
      assert.equal(condition(waiting, "Terminating").status, "True");
      // Still served for reads, but no new objects.
      const list = await t.json("GET", WIDGETS);
      assert.deepEqual(list.body.items.map((i: any) => i.metadata.name), ["held"]);
      assert.ok(list.body.items[0].metadata.deletionTimestamp);
      const refused = await t.json("POST", WIDGETS, { body: widget("new") });
      assert.equal(refused.status, 405);
      assert.equal(
        refused.body.message,
        'create is not supported on resources of kind "widgets.ssa.example.com"',
      );
    }
    {
      await using t = await testServer({ dataDir, storage: "file" });
      const crd = await t.json("GET", `${CRDS}/${WIDGETS_CRD}`);
      assert.equal(crd.status, 200);
      const release = await t.json("PATCH", `${WIDGETS}/held`, {
        body: { metadata: { finalizers: null } },
        headers: { "Content-Type": "application/merge-patch+json" },
      });
      assert.equal(release.status, 200, JSON.stringify(release.body));
      await waitCrd(t, WIDGETS_CRD, (_c, status) => status === 404);
      assert.equal((await t.json("GET", WIDGETS)).status, 404);
    }
    {
      // The objects are gone from storage, not only unserved.
      await using t = await testServer({ dataDir, storage: "file" });
      await createEstablished(t, widgetsCrd);
      assert.deepEqual((await t.json("GET", WIDGETS)).body.items, []);
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("crd: a deprecated version warns on every request, in kube's words or the CRD's", async () => {
  await using t = await testServer();
  const crd: any = structuredClone(gadgetsCrd);
  crd.spec.versions[0].deprecated = true;
  await createEstablished(t, crd);
  const gadgets = "/apis/ops.example.com/v1alpha1/gadgets";
  const created = await t.json("POST", gadgets, {
    body: {
      apiVersion: "ops.example.com/v1alpha1",
      kind: "Gadget",
      metadata: { name: "g" },
      spec: { size: 1 },
    },
  });
  assert.equal(created.status, 201);
  assert.equal(
    created.headers.get("Warning"),
    '299 - "ops.example.com/v1alpha1 Gadget is deprecated"',
  );
  const missing = await t.json("GET", `${gadgets}/nope`);
  assert.equal(missing.status, 404);
  assert.equal(
    missing.headers.get("Warning"),
    '299 - "ops.example.com/v1alpha1 Gadget is deprecated"',
  );

  // A custom warning replaces kube's text once the CRD says so.
  const current = (await t.json("GET", `${CRDS}/gadgets.ops.example.com`)).body;
  current.spec.versions[0].deprecationWarning = "use ops.example.com/v1 instead";
  assert.equal(
    (await t.json("PUT", `${CRDS}/gadgets.ops.example.com`, { body: current })).status,
    200,
  );
  let warning: string | null = null;
  for (let i = 0; i < 50 && warning !== '299 - "use ops.example.com/v1 instead"'; i++) {
    warning = (await t.json("GET", gadgets)).headers.get("Warning");
    if (warning !== '299 - "use ops.example.com/v1 instead"') {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  assert.equal(warning, '299 - "use ops.example.com/v1 instead"');
  // Built-in resources carry no deprecation warning.
  assert.equal((await t.json("GET", "/api/v1/configmaps")).headers.get("Warning"), null);
});

Deno.test("crd: deprecationWarning only on deprecated versions, short and printable", async () => {
  await using t = await testServer();
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { deprecationWarning: "x" },
      /deprecationWarning: Invalid value: "x": can only be set for deprecated versions/,
    ],
    [{ deprecated: true, deprecationWarning: "w".repeat(257) }, /deprecationWarning: Too long/],
    [
      { deprecated: true, deprecationWarning: "a\u0007b" },
      /non-printable character found at index 1/,
    ],
  ];
  for (const [fields, message] of cases) {
    const crd = structuredClone(gadgetsCrd);
    Object.assign(crd.spec.versions[0], fields);
    const res = await t.json("POST", CRDS, { body: crd });
    assert.equal(res.status, 422, JSON.stringify(fields));
    assert.match(res.body.message, message);
  }
});
