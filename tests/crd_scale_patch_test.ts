// deno-lint-ignore-file no-explicit-any
/**
 * The patch types of a custom resource's `/scale` as kube takes them: JSON patch, merge patch
 * and server-side apply (an autoscaling/v1 Scale configuration whose replicas ownership is the
 * object's `spec.replicas` ownership, recorded on the object under subresource `scale`);
 * strategic merge patch refused with kube's 415. kubectl's `scale` and `patch --subresource`.
 */

import assert from "node:assert/strict";
import { type TestServer, testServer } from "./harness.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const SHARDS = "/apis/db.example.com/v1/namespaces/default/shards";
const APPLY = { "Content-Type": "application/apply-patch+yaml" };
const ACCEPTED = "application/json-patch+json, application/merge-patch+json, " +
  "application/apply-patch+yaml";

/** A CRD with a scale subresource (replicas defaulted to 1) and a status. */
function shardsCrd(): any {
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
          scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
        },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                default: {},
                properties: {
                  replicas: { type: "integer", default: 1 },
                  size: { type: "string" },
                },
              },
              status: { type: "object", properties: { replicas: { type: "integer" } } },
            },
          },
        },
      }],
    },
  };
}

async function established(t: TestServer, crd = shardsCrd()): Promise<void> {
  const res = await t.json("POST", CRDS, { body: crd });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  for (let i = 0; i < 200; i++) {
    const crd = (await t.json("GET", `${CRDS}/shards.db.example.com`)).body;
    if (crd.status?.conditions?.some((c: any) => c.type === "Established" && c.status === "True")) {
      // The resource is served once discovery has it.
      const d = await t.json("GET", "/apis/db.example.com/v1");
      if (d.status === 200) return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the CRD never got established");
}

function scaleConfig(replicas?: number): any {
  const c: any = { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "s" } };
  if (replicas !== undefined) c.spec = { replicas };
  return c;
}

/** The managed fields entries of the object, as `manager/operation/subresource: fields`. */
async function owners(t: TestServer): Promise<Record<string, any>> {
  const obj = (await t.json("GET", `${SHARDS}/s`)).body;
  return Object.fromEntries(
    (obj.metadata.managedFields ?? []).map((e: any) => [
      `${e.manager}/${e.operation}/${e.subresource ?? ""}@${e.apiVersion}`,
      e.fieldsV1,
    ]),
  );
}

Deno.test("crd scale apply: replicas ownership is the object's, conflicts and force", async () => {
  await using t = await testServer();
  await established(t);
  let res = await t.json("PATCH", `${SHARDS}/s?fieldManager=owner`, {
    headers: APPLY,
    body: {
      apiVersion: "db.example.com/v1",
      kind: "Shard",
      metadata: { name: "s" },
      spec: { replicas: 2, size: "L" },
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));

  // Another manager's apply of other replicas conflicts with the object's owner.
  res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=hpa`, {
    headers: APPLY,
    body: scaleConfig(5),
  });
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.equal(res.body.reason, "Conflict");
  assert.match(
    res.body.message,
    /^Apply failed with 1 conflict: conflict with "owner".*\.spec\.replicas/,
  );
  assert.equal((await t.json("GET", `${SHARDS}/s`)).body.spec.replicas, 2);

  // Applying the value it already has is no conflict: both own it then.
  res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=hpa`, {
    headers: APPLY,
    body: scaleConfig(2),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(await owners(t), {
    "owner/Apply/@db.example.com/v1": { "f:spec": { "f:replicas": {}, "f:size": {} } },
    "hpa/Apply/scale@db.example.com/v1": { "f:spec": { "f:replicas": {} } },
  });

  // Forced, the applier takes the field from the object's owner, who keeps the rest.
  res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=hpa&force=true`, {
    headers: APPLY,
    body: scaleConfig(5),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.kind, "Scale");
  assert.equal(res.body.spec.replicas, 5);
  assert.equal((await t.json("GET", `${SHARDS}/s`)).body.spec.replicas, 5);
  assert.deepEqual(await owners(t), {
    "owner/Apply/@db.example.com/v1": { "f:spec": { "f:size": {} } },
    "hpa/Apply/scale@db.example.com/v1": { "f:spec": { "f:replicas": {} } },
  });

  // Now the object's owner conflicts with the Scale's applier, named with its subresource.
  res = await t.json("PATCH", `${SHARDS}/s?fieldManager=owner`, {
    headers: APPLY,
    body: {
      apiVersion: "db.example.com/v1",
      kind: "Shard",
      metadata: { name: "s" },
      spec: { replicas: 3, size: "L" },
    },
  });
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.match(res.body.message, /conflict with "hpa".*\.spec\.replicas/);

  // An update through /scale (merge patch) takes the field as an Update entry.
  res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=editor`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { spec: { replicas: 7 } },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.spec.replicas, 7);
  const after = await owners(t);
  assert.deepEqual(after["editor/Update/scale@db.example.com/v1"], {
    "f:spec": { "f:replicas": {} },
  });
  assert.equal(after["hpa/Apply/scale@db.example.com/v1"], undefined);

  // JSON patch works as well.
  res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    headers: { "Content-Type": "application/json-patch+json" },
    body: [{ op: "replace", path: "/spec/replicas", value: 4 }],
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.spec.replicas, 4);
});

Deno.test("crd scale apply: dry run, YAML, and an object without replicas", async () => {
  await using t = await testServer();
  // Without the replicas default, an object may have none.
  const crd = shardsCrd();
  delete crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.default;
  await established(t, crd);
  let res = await t.json("POST", SHARDS, { body: scaleLessShard() });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.spec.replicas, undefined);

  // A configuration without replicas has nothing to set.
  res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=hpa`, {
    headers: APPLY,
    body: scaleConfig(),
  });
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.message, 'the spec replicas field ".spec.replicas" cannot be empty');

  // YAML, dry run: answered, not stored.
  res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=hpa&dryRun=All`, {
    headers: APPLY,
    body: "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: s\nspec:\n  replicas: 9\n",
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.spec.replicas, 9);
  assert.equal((await t.json("GET", `${SHARDS}/s`)).body.spec.replicas, undefined);

  res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=hpa`, {
    headers: APPLY,
    body: scaleConfig(2),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal((await t.json("GET", `${SHARDS}/s`)).body.spec.replicas, 2);
  assert.deepEqual((await owners(t))["hpa/Apply/scale@db.example.com/v1"], {
    "f:spec": { "f:replicas": {} },
  });
});

Deno.test("crd scale patch: refused types and options get kube's errors", async () => {
  await using t = await testServer();
  await established(t);
  assert.equal((await t.json("POST", SHARDS, { body: scaleLessShard() })).status, 201);

  let res = await t.json("PATCH", `${SHARDS}/s/scale`, {
    headers: { "Content-Type": "application/strategic-merge-patch+json" },
    body: { spec: { replicas: 2 } },
  });
  assert.equal(res.status, 415, JSON.stringify(res.body));
  assert.equal(res.body.reason, "UnsupportedMediaType");
  assert.equal(
    res.body.message,
    `the body of the request was in an unknown format - accepted media types include: ${ACCEPTED}`,
  );

  // Apply needs a field manager; force is for apply only.
  res = await t.json("PATCH", `${SHARDS}/s/scale`, { headers: APPLY, body: scaleConfig(2) });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.match(res.body.message, /fieldManager: Required value: is required for apply patch/);
  res = await t.json("PATCH", `${SHARDS}/s/scale?force=true`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { spec: { replicas: 2 } },
  });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.match(res.body.message, /force: Forbidden: may not be specified for non-apply patch/);

  // The configuration is a Scale of autoscaling/v1, of this object, with integer replicas.
  const bad: [any, RegExp][] = [
    [
      { ...scaleConfig(2), apiVersion: "autoscaling/v2" },
      /^Incorrect version specified in apply patch. Specified patch version: autoscaling\/v2, expected: autoscaling\/v1$/,
    ],
    [
      { ...scaleConfig(2), kind: "Shard" },
      /^Incorrect kind specified in apply patch. Specified patch kind: Shard, expected: Scale$/,
    ],
    [
      { ...scaleConfig(2), metadata: { name: "other" } },
      /^the name of the object \(other\) does not match the name on the URL \(s\)$/,
    ],
    [scaleConfig("many" as any), /spec\.replicas: "many" is not an int32/],
  ];
  for (const [body, message] of bad) {
    res = await t.json("PATCH", `${SHARDS}/s/scale?fieldManager=m`, { headers: APPLY, body });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.message, message);
  }
  assert.equal((await t.json("GET", `${SHARDS}/s`)).body.spec.replicas, 1);
});

function scaleLessShard(): any {
  return { apiVersion: "db.example.com/v1", kind: "Shard", metadata: { name: "s" } };
}

Deno.test({
  name: "kubectl: scale and patch --subresource=scale keep working on a custom resource",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using env = await kubectlEnv();
  const { ok, kubectl } = env;
  await ok(["apply", "-f", "-"], JSON.stringify(shardsCrd()));
  await ok(["wait", "--for=condition=Established", "crd/shards.db.example.com", "--timeout=20s"]);
  await ok(["apply", "--server-side", "-f", "-"], JSON.stringify(scaleLessShard()));
  assert.equal(await ok(["scale", "shard/s", "--replicas=3"]), "shard.db.example.com/s scaled\n");
  assert.equal(await ok(["get", "shard", "s", "-o", "jsonpath={.spec.replicas}"]), "3");
  await ok([
    "patch",
    "shard",
    "s",
    "--subresource=scale",
    "--type=merge",
    "-p",
    '{"spec":{"replicas":4}}',
  ]);
  assert.equal(await ok(["get", "shard", "s", "-o", "jsonpath={.spec.replicas}"]), "4");
  const strategic = await kubectl([
    "patch",
    "shard",
    "s",
    "--subresource=scale",
    "--type=strategic",
    "-p",
    '{"spec":{"replicas":5}}',
  ]);
  assert.notEqual(strategic.code, 0);
  assert.match(strategic.stderr, /the body of the request was in an unknown format/);
});
