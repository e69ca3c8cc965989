import assert from "node:assert/strict";
import { MemoryStore } from "../../storage/mod.ts";
import { StoredPolicies } from "./source.ts";

const PREFIXES = { policies: "/policies/", bindings: "/bindings/" };

const policy = (name: string, expression: string) =>
  JSON.stringify({ metadata: { name }, spec: { validations: [{ expression }] } });
const binding = (name: string, policyName: string) =>
  JSON.stringify({ metadata: { name }, spec: { policyName, validationActions: ["Deny"] } });

Deno.test("StoredPolicies: every write is in the next answer; no write, the same answer", async () => {
  const store = new MemoryStore();
  try {
    const source = new StoredPolicies(store, PREFIXES);
    assert.equal((await source.current()).bindings.length, 0);

    const p = await store.create("/policies/small", policy("small", "size(object.data) < 3"));
    await store.create("/bindings/small", binding("small", "small"));
    const first = await source.current();
    assert.deepEqual([...first.policies.keys()], ["small"]);
    assert.deepEqual(first.bindings.map((b) => b.policyName), ["small"]);
    // Unchanged: the answer already made, not a new one.
    assert.equal(await source.current(), first);
    // Writes elsewhere change nothing here.
    await store.create("/configmaps/default/a", "{}");
    assert.equal(await source.current(), first);

    await store.update("/policies/small", policy("small", "size(object.data) < 9"), p.modRevision);
    const updated = await source.current();
    assert.notEqual(updated, first);
    const [validation] = updated.policies.get("small")!.validations;
    assert.equal(validation.text, "size(object.data) < 9");

    await store.create("/bindings/second", binding("second", "small"));
    assert.deepEqual((await source.current()).bindings.map((b) => b.name), ["second", "small"]);
    await store.delete("/bindings/second");
    assert.deepEqual((await source.current()).bindings.map((b) => b.name), ["small"]);
    await store.delete("/bindings/small");
    assert.equal((await source.current()).bindings.length, 0);
  } finally {
    await store.close();
  }
});
