// deno-lint-ignore-file no-explicit-any
/**
 * Custom resources over real HTTPS: schema defaults (on create, update, apply and on read of
 * objects stored before the default existed; bad defaults refused with the field path), the
 * `scale` subresource (autoscaling/v1 Scale in JSON and protobuf, GET, PUT, PATCH, its
 * discovery entry) and printer columns in Table responses.
 */

import assert from "node:assert/strict";
import { type TestServer, testServer } from "./harness.ts";
import { decodeObject, encodeObject } from "../lib/codec/protobuf/mod.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";
import { answer, patchOf, startTestWebhook } from "../lib/admission/webhook/webhook_testdata.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const SHARDS = "/apis/db.example.com/v1/namespaces/default/shards";
const PROTOBUF = "application/vnd.kubernetes.protobuf";

/** The Shard CRD: defaults, a status and a scale subresource, printer columns. */
export function shardsCrd(): any {
  return {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "shards.db.example.com" },
    spec: {
      group: "db.example.com",
      scope: "Namespaced",
      names: { plural: "shards", singular: "shard", kind: "Shard", listKind: "ShardList" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: {
            specReplicasPath: ".spec.replicas",
            statusReplicasPath: ".status.replicas",
            labelSelectorPath: ".status.selector",
          },
        },
        additionalPrinterColumns: [
          { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
          { name: "Size", type: "string", jsonPath: ".spec.size", description: "How big" },
          { name: "Ready", type: "boolean", jsonPath: ".status.ready", priority: 1 },
          { name: "Ratio", type: "number", jsonPath: ".spec.ratio", priority: 1 },
          { name: "Zones", type: "string", jsonPath: ".spec.zones", priority: 1 },
          { name: "Since", type: "date", jsonPath: ".metadata.creationTimestamp" },
        ],
        schema: {
          openAPIV3Schema: {
            type: "object",
            // Required, but defaulted: defaults are filled in before validation.
            required: ["spec"],
            properties: {
              spec: {
                type: "object",
                default: {},
                properties: {
                  replicas: { type: "integer", default: 1 },
                  size: { type: "string", default: "M", enum: ["S", "M", "L"] },
                  ratio: { type: "number" },
                  zones: { type: "array", items: { type: "string" } },
                  ports: {
                    type: "array",
                    items: {
                      type: "object",
                      properties: {
                        port: { type: "integer" },
                        protocol: { type: "string", default: "TCP" },
                      },
                    },
                  },
                },
              },
              status: {
                type: "object",
                properties: {
                  replicas: { type: "integer" },
                  selector: { type: "string" },
                  ready: { type: "boolean" },
                },
              },
            },
          },
        },
      }],
    },
  };
}

function shard(name: string, spec?: Record<string, unknown>): any {
  const obj: any = { apiVersion: "db.example.com/v1", kind: "Shard", metadata: { name } };
  if (spec) obj.spec = spec;
  return obj;
}

/** Polls until `done` holds for the GET of `path` (a few seconds at most). */
async function waitFor(t: TestServer, path: string, done: (body: any) => boolean): Promise<any> {
  let last: any;
  for (let i = 0; i < 200; i++) {
    last = await t.json("GET", path);
    if (last.status === 200 && done(last.body)) return last.body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${path} never got there: ${JSON.stringify(last?.body)}`);
}

async function createEstablished(t: TestServer, crd: any): Promise<void> {
  const res = await t.json("POST", CRDS, { body: crd });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  await waitFor(
    t,
    `${CRDS}/${crd.metadata.name}`,
    (c) =>
      (c.status?.conditions ?? []).some((x: any) =>
        x.type === "Established" && x.status === "True"
      ),
  );
}

Deno.test("crd defaults: applied on create, update, patch and apply", async () => {
  await using t = await testServer();
  await createEstablished(t, shardsCrd());

  // Create: spec is defaulted to {}, then its fields; list items get theirs.
  let res = await t.json("POST", SHARDS, { body: shard("a") });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.deepEqual(res.body.spec, { replicas: 1, size: "M" });
  res = await t.json("POST", SHARDS, { body: shard("b", { replicas: 0, ports: [{ port: 80 }] }) });
  assert.deepEqual(res.body.spec, {
    replicas: 0,
    size: "M",
    ports: [{ port: 80, protocol: "TCP" }],
  });

  // Update: a PUT that leaves a defaulted field out gets the default back.
  const a = (await t.json("GET", `${SHARDS}/a`)).body;
  a.spec = { replicas: 3 };
  res = await t.json("PUT", `${SHARDS}/a`, { body: a });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.spec, { replicas: 3, size: "M" });

  // A merge patch that removes a field: it comes back with its default.
  res = await t.json("PATCH", `${SHARDS}/a`, {
    body: { spec: { size: null, replicas: 4 } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.spec, { replicas: 4, size: "M" });
  // Leaving a defaulted field out is no change: nothing is written, the generation stays.
  const before = res.body;
  res = await t.json("PUT", `${SHARDS}/a`, { body: { ...before, spec: { replicas: 4 } } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(
    [res.body.metadata.resourceVersion, res.body.metadata.generation],
    [before.metadata.resourceVersion, before.metadata.generation],
  );

  // Apply: a field the applier set and then leaves out is reset to its default.
  const apply = (spec: unknown) =>
    t.json("PATCH", `${SHARDS}/c?fieldManager=deployer`, {
      body: JSON.stringify(shard("c", spec as Record<string, unknown>)),
      headers: { "Content-Type": "application/apply-patch+yaml" },
    });
  res = await apply({ replicas: 5, size: "L" });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.deepEqual(res.body.spec, { replicas: 5, size: "L" });
  res = await apply({ replicas: 5 });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.spec, { replicas: 5, size: "M" });
  const mine = res.body.metadata.managedFields.find((e: any) => e.manager === "deployer");
  assert.deepEqual(mine.fieldsV1, { "f:spec": { "f:replicas": {} } });
});

Deno.test("crd defaults: objects stored before a default was added read with it", async () => {
  await using t = await testServer();
  const crd = shardsCrd();
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  delete spec.properties.size.default;
  await createEstablished(t, crd);
  await t.json("POST", SHARDS, { body: shard("old", { replicas: 2 }) });
  assert.deepEqual((await t.json("GET", `${SHARDS}/old`)).body.spec, { replicas: 2 });

  // The CRD gains a default: the stored object (unchanged in the store) reads with it.
  const stored = (await t.json("GET", `${CRDS}/shards.db.example.com`)).body;
  const rv = (await t.json("GET", `${SHARDS}/old`)).body.metadata.resourceVersion;
  stored.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.default = "S";
  const put = await t.json("PUT", `${CRDS}/shards.db.example.com`, { body: stored });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const got = await waitFor(t, `${SHARDS}/old`, (o) => o.spec.size !== undefined);
  assert.deepEqual(got.spec, { replicas: 2, size: "S" });
  assert.equal(got.metadata.resourceVersion, rv);
  const list = (await t.json("GET", SHARDS)).body;
  assert.deepEqual(list.items.map((o: any) => o.spec), [{ replicas: 2, size: "S" }]);
});

Deno.test("crd defaults: a CRD with a bad default is refused with 422 naming the field", async () => {
  await using t = await testServer();
  const crd = shardsCrd();
  const props = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
  props.replicas.default = "one";
  props.size.default = "XL";
  props.ports.items.default = { port: 1, bogus: true };
  const res = await t.json("POST", CRDS, { body: crd });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.reason, "Invalid");
  const at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties";
  assert.deepEqual(res.body.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
    `${at}[replicas].default: Invalid value: "string": must be of type integer`,
    `${at}[size].default: Unsupported value: "XL": supported values: "S", "M", "L"`,
    `${at}[ports].items.default: Invalid value: {"port":1,"bogus":true}: must not have unknown fields`,
  ]);
  assert.match(
    res.body.message,
    /^CustomResourceDefinition.apiextensions.platform.io "shards.db.example.com" is invalid: \[/,
  );
  assert.equal((await t.json("GET", CRDS)).body.items.length, 0);
});

Deno.test("crd scale: GET, PUT and PATCH of autoscaling/v1 Scale in JSON and protobuf", async () => {
  await using t = await testServer();
  await createEstablished(t, shardsCrd());
  const created = (await t.json("POST", SHARDS, { body: shard("s", { replicas: 2 }) })).body;
  let res = await t.json("PUT", `${SHARDS}/s/status`, {
    body: { ...created, status: { replicas: 2, selector: "app=s" } },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const rv = res.body.metadata.resourceVersion;

  // Discovery names the subresource's kind.
  const discovery = (await t.json("GET", "/apis/db.example.com/v1")).body;
  assert.deepEqual(discovery.resources.find((r: any) => r.name === "shards/scale"), {
    name: "shards/scale",
    singularName: "",
    namespaced: true,
    group: "autoscaling",
    version: "v1",
    kind: "Scale",
    verbs: ["get", "patch", "update"],
  });

  // OpenAPI describes the subresource with the Scale schema.
  const v3 = (await t.json("GET", "/openapi/v3/apis/db.example.com/v1")).body;
  const scalePath = v3.paths["/apis/db.example.com/v1/namespaces/{namespace}/shards/{name}/scale"];
  assert.equal(
    scalePath.get.responses["200"].content["application/json"].schema.$ref,
    "#/components/schemas/io.k8s.api.autoscaling.v1.Scale",
  );
  assert.equal(
    v3.components.schemas["io.k8s.api.autoscaling.v1.ScaleSpec"].properties.replicas.type,
    "integer",
  );

  res = await t.json("GET", `${SHARDS}/s/scale`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body, {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: {
      name: "s",
      namespace: "default",
      uid: created.metadata.uid,
      resourceVersion: rv,
      creationTimestamp: created.metadata.creationTimestamp,
    },
    spec: { replicas: 2 },
    status: { replicas: 2, selector: "app=s" },
  });

  // Protobuf: the same Scale.
  const pb = await t.request("GET", `${SHARDS}/s/scale`, { headers: { Accept: PROTOBUF } });
  assert.equal(pb.status, 200);
  assert.equal(pb.headers.get("Content-Type"), PROTOBUF);
  assert.deepEqual(decodeObject(new Uint8Array(await pb.arrayBuffer())), res.body);

  // PUT: replicas go to .spec.replicas; the write is the scale subresource's.
  const scale = res.body;
  scale.spec.replicas = 4;
  res = await t.json("PUT", `${SHARDS}/s/scale?fieldManager=hpa`, { body: scale });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.kind, "Scale");
  assert.equal(res.body.spec.replicas, 4);
  let obj = (await t.json("GET", `${SHARDS}/s`)).body;
  assert.equal(obj.spec.replicas, 4);
  assert.equal(obj.metadata.generation, 2);
  assert.deepEqual(
    obj.metadata.managedFields.find((e: any) => e.manager === "hpa"),
    {
      manager: "hpa",
      operation: "Update",
      apiVersion: "db.example.com/v1",
      time: obj.metadata.managedFields.find((e: any) => e.manager === "hpa").time,
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": { "f:replicas": {} } },
      subresource: "scale",
    },
  );

  // A stale resourceVersion is a conflict.
  res = await t.json("PUT", `${SHARDS}/s/scale`, { body: { ...scale, spec: { replicas: 9 } } });
  assert.equal(res.status, 409, JSON.stringify(res.body));

  // Merge patch and JSON patch.
  res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    body: { spec: { replicas: 3 } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual([res.body.spec, res.body.status], [{ replicas: 3 }, {
    replicas: 2,
    selector: "app=s",
  }]);
  res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    body: [{ op: "replace", path: "/spec/replicas", value: 6 }],
    headers: { "Content-Type": "application/json-patch+json" },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal((await t.json("GET", `${SHARDS}/s`)).body.spec.replicas, 6);
  // Zero replicas: kube's JSON leaves spec.replicas out of the Scale.
  res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    body: { spec: { replicas: 0 } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assert.deepEqual([res.status, res.body.spec], [200, {}]);
  assert.equal((await t.json("GET", `${SHARDS}/s`)).body.spec.replicas, 0);

  // A protobuf PUT.
  const body = encodeObject({
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: { name: "s", namespace: "default" },
    spec: { replicas: 7 },
    status: {},
  });
  const client = Deno.createHttpClient({ caCerts: [t.server.caCertPem] });
  const put = await fetch(`${t.server.url}${SHARDS}/s/scale`, {
    method: "PUT",
    body: body as Uint8Array<ArrayBuffer>,
    headers: {
      "Content-Type": PROTOBUF,
      Accept: PROTOBUF,
      Authorization: `Bearer ${t.server.adminToken}`,
    },
    client,
  });
  assert.equal(put.status, 200, await put.clone().text());
  const answer = decodeObject(new Uint8Array(await put.arrayBuffer())) as any;
  assert.equal(answer.spec.replicas, 7);
  client.close();
  obj = (await t.json("GET", `${SHARDS}/s`)).body;
  assert.equal(obj.spec.replicas, 7);
  assert.equal(obj.status.replicas, 2);
});

Deno.test("crd scale: bad input gets kube's errors", async () => {
  await using t = await testServer();
  await createEstablished(t, shardsCrd());
  await t.json("POST", SHARDS, { body: shard("s") });

  let res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    body: { spec: { replicas: -1 } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(
    res.body.message,
    'Shard.db.example.com "s" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer',
  );
  // The same rule holds for the object itself while the scale subresource exists.
  res = await t.json("POST", SHARDS, { body: shard("neg", { replicas: -2 }) });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.match(
    res.body.message,
    /\.spec\.replicas: Invalid value: -2: should be a non-negative integer/,
  );

  res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    body: { spec: { replicas: "many" } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assert.equal(res.status, 400, JSON.stringify(res.body));

  res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    body: { spec: { replicas: 2 } },
    headers: { "Content-Type": "application/strategic-merge-patch+json" },
  });
  assert.equal(res.status, 415, JSON.stringify(res.body));

  res = await t.json("PUT", `${SHARDS}/s/scale`, {
    body: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "other" } },
  });
  assert.equal(res.status, 400, JSON.stringify(res.body));

  res = await t.json("GET", `${SHARDS}/missing/scale`);
  assert.equal(res.status, 404, JSON.stringify(res.body));
  assert.equal(res.body.message, 'shards.db.example.com "missing" not found');

  // A CRD whose scale paths are not where kube wants them.
  const crd = shardsCrd();
  crd.metadata.name = "bad.db.example.com";
  crd.spec.names = { plural: "bad", kind: "Bad" };
  crd.spec.versions[0].subresources.scale = {
    specReplicasPath: ".status.replicas",
    statusReplicasPath: "status.replicas",
  };
  res = await t.json("POST", CRDS, { body: crd });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.deepEqual(res.body.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
    'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
    'spec.versions[0].subresources.scale.statusReplicasPath: Invalid value: "status.replicas": must be a simple json path starting with .',
  ]);
});

const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";

Deno.test("crd printer columns: Table responses carry the CRD's columns and cells", async () => {
  await using t = await testServer();
  await createEstablished(t, shardsCrd());
  await t.json("POST", SHARDS, {
    body: shard("p", { replicas: 2, size: "L", ratio: 0.5, zones: ["a", "b"] }),
  });
  await t.json("POST", SHARDS, { body: shard("q") });
  const res = await t.json("GET", SHARDS, { headers: { Accept: TABLE } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(
    res.body.columnDefinitions.map((c: any) => [c.name, c.type, c.format, c.priority]),
    [
      ["Name", "string", "name", 0],
      ["Replicas", "integer", "", 0],
      ["Size", "string", "", 0],
      ["Ready", "boolean", "", 1],
      ["Ratio", "number", "", 1],
      ["Zones", "string", "", 1],
      ["Since", "date", "", 0],
    ],
  );
  assert.deepEqual(res.body.columnDefinitions.slice(1, 3).map((c: any) => c.description), [
    "Custom resource definition column (in JSONPath format): .spec.replicas",
    "How big",
  ]);
  const [p, q] = res.body.rows.map((r: any) => r.cells);
  assert.deepEqual(p.slice(0, 6), ["p", 2, "L", "<none>", 0.5, '["a","b"]']);
  assert.match(p[6], /^\d+s$/);
  assert.deepEqual(q.slice(0, 6), ["q", 1, "M", "<none>", "<none>", "<none>"]);

  // One object, and a CRD without columns: Name and kube's default Age.
  const one = await t.json("GET", `${SHARDS}/p`, { headers: { Accept: TABLE } });
  assert.equal(one.body.rows.length, 1);
  const plain = shardsCrd();
  plain.metadata.name = "plains.db.example.com";
  plain.spec.names = { plural: "plains", kind: "Plain" };
  delete plain.spec.versions[0].additionalPrinterColumns;
  await createEstablished(t, plain);
  await t.json("POST", "/apis/db.example.com/v1/namespaces/default/plains", {
    body: { apiVersion: "db.example.com/v1", kind: "Plain", metadata: { name: "x" } },
  });
  const table = await t.json("GET", "/apis/db.example.com/v1/namespaces/default/plains", {
    headers: { Accept: TABLE },
  });
  assert.deepEqual(table.body.columnDefinitions.map((c: any) => [c.name, c.type]), [
    ["Name", "string"],
    ["Age", "date"],
  ]);
  assert.match(table.body.rows[0].cells[1], /^\d+s$/);

  // Bad columns are refused when the CRD is written.
  const bad = shardsCrd();
  bad.metadata.name = "bads.db.example.com";
  bad.spec.names = { plural: "bads", kind: "Bad" };
  bad.spec.versions[0].additionalPrinterColumns = [
    { name: "X", type: "float", jsonPath: "spec.x" },
  ];
  const refused = await t.json("POST", CRDS, { body: bad });
  assert.equal(refused.status, 422, JSON.stringify(refused.body));
  assert.deepEqual(refused.body.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
    'spec.versions[0].additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string',
    'spec.versions[0].additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .',
  ]);
});

Deno.test({
  name: "kubectl: get shows a CRD's printer columns (-o wide the others), scale changes replicas",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();
  const { ok, kubectl } = env;
  await ok(["apply", "-f", "-"], JSON.stringify(shardsCrd()));
  await ok(["wait", "--for=condition=Established", "crd/shards.db.example.com", "--timeout=20s"]);
  await ok(["apply", "-f", "-"], JSON.stringify(shard("s1", { replicas: 2, ratio: 0.5 })));
  await ok(["apply", "-f", "-"], JSON.stringify(shard("s2", { size: "S", zones: ["z1"] })));

  await t.step("get: the columns, defaults filled in", async () => {
    const out = await ok(["get", "shards"]);
    const lines = out.trimEnd().split("\n");
    assert.match(lines[0], /^NAME\s+REPLICAS\s+SIZE\s+SINCE$/);
    assert.match(lines[1], /^s1\s+2\s+M\s+\d+s$/);
    assert.match(lines[2], /^s2\s+1\s+S\s+\d+s$/);
  });

  await t.step("get -o wide: the priority columns too", async () => {
    const lines = (await ok(["get", "shards", "-o", "wide"])).trimEnd().split("\n");
    assert.match(lines[0], /^NAME\s+REPLICAS\s+SIZE\s+READY\s+RATIO\s+ZONES\s+SINCE$/);
    assert.match(lines[1], /^s1\s+2\s+M\s+<none>\s+0.5\s+<none>\s+\d+s$/);
    assert.match(lines[2], /^s2\s+1\s+S\s+<none>\s+<none>\s+\["z1"\]\s+\d+s$/);
  });

  await t.step("scale: --replicas sets .spec.replicas", async () => {
    assert.equal(
      await ok(["scale", "shard/s1", "--replicas=3"]),
      "shard.db.example.com/s1 scaled\n",
    );
    assert.equal(await ok(["get", "shard", "s1", "-o", "jsonpath={.spec.replicas}"]), "3");
    assert.match((await ok(["get", "shards"])).split("\n")[1], /^s1\s+3\s+M\s+/);
    // With a precondition that does not hold, nothing changes.
    const stale = await kubectl(["scale", "shard/s1", "--current-replicas=5", "--replicas=1"]);
    assert.notEqual(stale.code, 0);
    assert.match(stale.stderr, /Expected replicas to be 5, was 3/);
    assert.equal(await ok(["get", "shard", "s1", "-o", "jsonpath={.spec.replicas}"]), "3");
    // With one that holds, kubectl writes the Scale back with its resourceVersion (a PUT).
    await ok(["scale", "shard/s1", "--current-replicas=3", "--replicas=1"]);
    assert.equal(await ok(["get", "shard", "s1", "-o", "jsonpath={.spec.replicas}"]), "1");
  });
});

Deno.test("crd defaults: a mutating webhook's change is defaulted again", async () => {
  await using hook = await startTestWebhook();
  await using t = await testServer();
  await createEstablished(t, shardsCrd());
  // The webhook takes size away (and adds zones).
  hook.respond = (review) =>
    answer(review, {
      allowed: true,
      patchType: "JSONPatch",
      patch: patchOf([{ op: "remove", path: "/spec/size" }, {
        op: "add",
        path: "/spec/zones",
        value: ["w"],
      }]),
    });
  const made = await t.json(
    "POST",
    "/apis/admissionregistration.platform.io/v1/mutatingwebhookconfigurations",
    {
      body: {
        apiVersion: "admissionregistration.platform.io/v1",
        kind: "MutatingWebhookConfiguration",
        metadata: { name: "strip" },
        webhooks: [{
          name: "strip.example.com",
          clientConfig: { url: `${hook.url}/strip`, caBundle: hook.caBundle },
          rules: [{
            operations: ["CREATE"],
            apiGroups: ["db.example.com"],
            apiVersions: ["v1"],
            resources: ["shards"],
          }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        }],
      },
    },
  );
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const res = await t.json("POST", SHARDS, { body: shard("m", { size: "L" }) });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  // The webhook saw the defaulted object and removed size: its default is back.
  assert.deepEqual(hook.received[0].review.request.object.spec, { replicas: 1, size: "L" });
  assert.deepEqual(res.body.spec, { replicas: 1, size: "M", zones: ["w"] });
});
