import { assert, assertEquals } from "../../tests/assert.ts";
import {
  type AdmissionAttributes,
  AdmissionChain,
  type AdmissionPlugin,
  namespaceLifecycle,
} from "../admission/mod.ts";
import { forbidden } from "../api/mod.ts";
import { rejection } from "../admission/webhook/webhook_testdata.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { SchemaSet } from "../schema/mod.ts";
import { MemoryStore } from "../storage/mod.ts";
import { Catalogue } from "./catalogue.ts";
import { ResourceRegistry } from "./generic.ts";

const USER = { user: { username: "alice", groups: ["dev"] } };

function configMaps(plugins: AdmissionPlugin[]) {
  const store = new MemoryStore();
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const admission = new AdmissionChain(plugins);
  const registry = new ResourceRegistry(def, { store, schemas: SchemaSet.builtin(), admission });
  return { store, registry };
}

/** Records what each phase saw (a copy of the attributes, objects included). */
function recorder(seen: string[], attrs: AdmissionAttributes[]): AdmissionPlugin {
  return {
    name: "Recorder",
    operations: ["CREATE", "UPDATE", "DELETE"],
    admit: (a) => {
      seen.push(`admit ${a.operation}`);
      attrs.push(structuredClone({ ...a, authorize: undefined }));
    },
    validate: (a) => {
      seen.push(`validate ${a.operation}`);
    },
  };
}

Deno.test("admission: every write path runs the chain with the write's attributes", async () => {
  const seen: string[] = [];
  const attrs: AdmissionAttributes[] = [];
  const { store, registry } = configMaps([recorder(seen, attrs)]);
  await registry.create("ns", { metadata: { name: "a" }, data: { k: "1" } }, USER);
  await registry.update("ns", "a", { metadata: { name: "a" }, data: { k: "2" } }, USER, {});
  await registry.patch("ns", "a", { type: "merge", body: { data: { k: "3" } } }, USER, {});
  await registry.delete("ns", "a", { context: USER, dryRun: true });
  await registry.delete("ns", "a");
  assertEquals(seen, [
    "admit CREATE",
    "validate CREATE",
    "admit UPDATE",
    "validate UPDATE",
    "admit UPDATE",
    "validate UPDATE",
    "admit DELETE",
    "validate DELETE",
    "admit DELETE",
    "validate DELETE",
  ]);
  const [create, update, patch, dryDelete, serverDelete] = attrs;
  assertEquals(create.resource, { group: "", version: "v1", resource: "configmaps" });
  assertEquals(create.kind, { group: "", version: "v1", kind: "ConfigMap" });
  assertEquals([create.namespace, create.name, create.subresource], ["ns", "a", ""]);
  assertEquals(create.user.username, "alice");
  assertEquals(create.object?.data, { k: "1" });
  assertEquals(create.oldObject, undefined);
  assertEquals([update.object?.data, update.oldObject?.data], [{ k: "2" }, { k: "1" }]);
  assertEquals([patch.object?.data, patch.oldObject?.data], [{ k: "3" }, { k: "2" }]);
  assertEquals([dryDelete.dryRun, dryDelete.user.username], [true, "alice"]);
  assertEquals(dryDelete.oldObject?.data, { k: "3" });
  assertEquals(serverDelete.user.username, "system:apiserver");
  await store.close();
});

Deno.test("admission: mutating plugins change the object before validation; validating ones refuse before the store", async () => {
  const labeller: AdmissionPlugin = {
    name: "Labeller",
    operations: ["CREATE"],
    admit: (a) => {
      a.object!.metadata.labels = { ...a.object!.metadata.labels, team: "blue" };
    },
  };
  const noRed: AdmissionPlugin = {
    name: "NoRed",
    operations: ["CREATE", "UPDATE"],
    validate: (a) => {
      if (a.object?.data?.color === "red") {
        throw forbidden({ group: "", resource: "configmaps" }, a.name, "no red");
      }
    },
  };
  const { store, registry } = configMaps([labeller, noRed]);
  const made = await registry.create("ns", { metadata: { name: "a" } }, USER);
  assertEquals(made.object.metadata.labels, { team: "blue" });
  assertEquals((await registry.get("ns", "a")).metadata.labels, { team: "blue" });
  const err = await rejection(
    registry.create("ns", { metadata: { name: "b" }, data: { color: "red" } }, USER),
  );
  assertEquals(err.code, 403);
  await rejection(registry.get("ns", "b"));
  // Schema validation comes before the validating phase: an invalid object is a 422 here.
  const invalid = await rejection(
    registry.create(
      "ns",
      { metadata: { name: "c" }, data: { color: "red", "bad key": "x" } },
      USER,
    ),
  );
  assertEquals(invalid.code, 422);
  // A refused update leaves the stored object as it was.
  await rejection(
    registry.update("ns", "a", { metadata: { name: "a" }, data: { color: "red" } }, USER, {}),
  );
  assertEquals((await registry.get("ns", "a")).data, undefined);
  await store.close();
});

Deno.test("admission: NamespaceLifecycle refuses creates in missing and terminating namespaces", async () => {
  const phases: Record<string, "Active" | "Terminating"> = { live: "Active", dying: "Terminating" };
  const lifecycle = namespaceLifecycle((name) => Promise.resolve(phases[name]));
  const { store, registry } = configMaps([lifecycle]);
  await registry.create("live", { metadata: { name: "a" } }, USER);
  const missing = await rejection(registry.create("gone", { metadata: { name: "a" } }, USER));
  assertEquals([missing.code, missing.message], [404, 'namespaces "gone" not found']);
  const dying = await rejection(registry.create("dying", { metadata: { name: "a" } }, USER));
  assertEquals(dying.code, 403);
  assertEquals(dying.toStatus().details?.causes?.[0]?.reason, "NamespaceTerminating");
  // Updates and deletes are not its business (a terminating namespace must be emptied).
  phases.live = "Terminating";
  await registry.update("live", "a", { metadata: { name: "a" }, data: { k: "v" } }, USER, {});
  await registry.delete("live", "a");
  await store.close();
});

Deno.test("admission chain: order, operations and unique names", async () => {
  const seen: string[] = [];
  const plugin = (name: string, ops: AdmissionPlugin["operations"]): AdmissionPlugin => ({
    name,
    operations: ops,
    admit: () => void seen.push(`${name}.admit`),
    validate: () => void seen.push(`${name}.validate`),
  });
  const chain = new AdmissionChain([plugin("A", ["CREATE"]), plugin("B", ["CREATE", "DELETE"])]);
  assertEquals(chain.names, ["A", "B"]);
  const attrs = { operation: "DELETE" } as AdmissionAttributes;
  await chain.admit(attrs);
  await chain.validate(attrs);
  assertEquals(seen, ["B.admit", "B.validate"]);
  seen.length = 0;
  await chain.admit({ ...attrs, operation: "CREATE" });
  assertEquals(seen, ["A.admit", "B.admit"]);
  let threw = false;
  try {
    new AdmissionChain([plugin("A", []), plugin("A", [])]);
  } catch (err) {
    threw = String(err).includes("admission plugin A is in the chain twice");
  }
  assert(threw, "a plugin twice is refused");
});
