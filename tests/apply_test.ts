// deno-lint-ignore-file no-explicit-any
/**
 * Server-side apply on built-in ConfigMaps over HTTPS: the move from client-side apply (rule
 * 13 of the conventions, with kubectl's annotation key and ours), entries per operation,
 * and list-map ownership from the schema's markers.
 */

import { assertEquals } from "./assert.ts";
import { type TestServer, testServer } from "./harness.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const KUBECTL_KEY = "kubectl.kubernetes.io/last-applied-configuration";
const OUR_KEY = "client.platform.io/last-applied-configuration";

function configMap(name: string, data: Record<string, string>, metadata: any = {}) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...metadata }, data };
}

function apply(ts: TestServer, manager: string, body: unknown, force = false) {
  const name = (body as any).metadata.name;
  return ts.json("PATCH", `${CM}/${name}?fieldManager=${manager}${force ? "&force=true" : ""}`, {
    headers: { "Content-Type": "application/apply-patch+yaml" },
    body: JSON.stringify(body),
  });
}

/** What `kubectl apply` (client-side) leaves: the object created by its manager with the
 * configuration recorded in the annotation. */
async function clientSideApplied(ts: TestServer, name: string, key: string, data: any) {
  const config = configMap(name, data);
  const res = await ts.json("POST", `${CM}?fieldManager=kubectl-client-side-apply`, {
    body: configMap(name, data, { annotations: { [key]: JSON.stringify(config) } }),
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

for (const key of [KUBECTL_KEY, OUR_KEY]) {
  Deno.test(`apply: client-side to server-side apply under "kubectl" (${key.split("/")[0]})`, async () => {
    await using ts = await testServer();
    await clientSideApplied(ts, "moved", key, { a: "1", b: "2" });

    // kubectl takes over what client-side apply recorded, changing it without conflicts...
    const moved = await apply(ts, "kubectl", configMap("moved", { a: "10", b: "2" }));
    assertEquals(moved.status, 200, JSON.stringify(moved.body));
    assertEquals(moved.body.data, { a: "10", b: "2" });
    // ...and keeps the annotation current, so going back to client-side apply works.
    assertEquals(
      JSON.parse(moved.body.metadata.annotations[key]),
      configMap("moved", { a: "10", b: "2" }),
    );
    const kubectl = moved.body.metadata.managedFields.find((e: any) => e.manager === "kubectl");
    assertEquals(kubectl.fieldsV1, { "f:data": { "f:a": {}, "f:b": {} } });

    // Another manager name opts out: the same change conflicts.
    await clientSideApplied(ts, "optout", key, { a: "1" });
    const other = await apply(ts, "my-tool", configMap("optout", { a: "10" }));
    assertEquals(other.status, 409);
    assertEquals(
      other.body.message,
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a',
    );
    const untouched = await ts.json("GET", `${CM}/optout`);
    assertEquals(JSON.parse(untouched.body.metadata.annotations[key]).data, { a: "1" });
  });
}

Deno.test("apply: a field changed by other means after client-side apply still conflicts", async () => {
  await using ts = await testServer();
  await clientSideApplied(ts, "drift", KUBECTL_KEY, { a: "1", b: "2" });
  const edited = await ts.json("PATCH", `${CM}/drift?fieldManager=editor`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { data: { a: "5" } },
  });
  assertEquals(edited.status, 200);
  const res = await apply(ts, "kubectl", configMap("drift", { a: "10", b: "20" }));
  assertEquals(res.status, 409, JSON.stringify(res.body));
  // b is still as recorded, so only the edited field conflicts.
  assertEquals(
    res.body.message,
    'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a',
  );
});

Deno.test("apply: one manager's Update and Apply are separate entries", async () => {
  await using ts = await testServer();
  const created = await ts.json("POST", `${CM}?fieldManager=tool`, {
    body: configMap("mixed", { a: "1" }),
  });
  assertEquals(created.status, 201);
  const applied = await apply(ts, "tool", configMap("mixed", { a: "1", b: "2" }));
  assertEquals(applied.status, 200, JSON.stringify(applied.body));
  const entries = applied.body.metadata.managedFields.map((e: any) => [
    e.manager,
    e.operation,
    e.fieldsV1,
  ]);
  assertEquals(entries, [
    ["tool", "Apply", { "f:data": { "f:a": {}, "f:b": {} } }],
    ["tool", "Update", { "f:data": { ".": {}, "f:a": {} } }],
  ]);
  // The Update entry is another manager to the applier: changing its field conflicts.
  const changed = await apply(ts, "tool", configMap("mixed", { a: "9", b: "2" }));
  assertEquals(changed.status, 409);
  assertEquals(
    changed.body.message,
    'Apply failed with 1 conflict: conflict with "tool" using v1: .data.a',
  );
});

Deno.test("apply: ownerReferences are a list-map keyed by uid, finalizers a set", async () => {
  await using ts = await testServer();
  const owner = (uid: string) => ({ apiVersion: "v1", kind: "ConfigMap", name: `o-${uid}`, uid });
  const first = await apply(
    ts,
    "one",
    configMap("owned", {}, { ownerReferences: [owner("u1")], finalizers: ["x/a"] }),
  );
  assertEquals(first.status, 201, JSON.stringify(first.body));
  const entry = first.body.metadata.managedFields[0];
  assertEquals(entry.fieldsV1, {
    "f:data": {},
    "f:metadata": {
      "f:finalizers": { 'v:"x/a"': {} },
      // An OwnerReference is an atomic struct: the item is owned whole.
      "f:ownerReferences": { 'k:{"uid":"u1"}': {} },
    },
  });
  const second = await apply(
    ts,
    "two",
    configMap("owned", {}, { ownerReferences: [owner("u2")], finalizers: ["x/b"] }),
  );
  assertEquals(second.status, 200, JSON.stringify(second.body));
  assertEquals(second.body.metadata.ownerReferences.map((o: any) => o.uid), ["u1", "u2"]);
  assertEquals(second.body.metadata.finalizers, ["x/a", "x/b"]);
  // One owner dropping its items removes only those.
  const dropped = await apply(ts, "one", configMap("owned", {}));
  assertEquals(dropped.body.metadata.ownerReferences.map((o: any) => o.uid), ["u2"]);
  assertEquals(dropped.body.metadata.finalizers, ["x/b"]);
  await apply(ts, "two", configMap("owned", {}));
});

Deno.test("managedFields: a create owns what it sets inside a kind's required structs, not the structs", async () => {
  await using ts = await testServer();
  const lease = await ts.json(
    "POST",
    "/apis/coordination.platform.io/v1/namespaces/default/leases?fieldManager=elector",
    { body: { metadata: { name: "l", labels: { a: "b" } }, spec: { holderIdentity: "me" } } },
  );
  assertEquals(lease.status, 201, JSON.stringify(lease.body));
  // As Kubernetes: `spec` is a non-optional struct of Lease; `labels` a map the create made.
  assertEquals(lease.body.metadata.managedFields[0].fieldsV1, {
    "f:metadata": { "f:labels": { ".": {}, "f:a": {} } },
    "f:spec": { "f:holderIdentity": {} },
  });
});
