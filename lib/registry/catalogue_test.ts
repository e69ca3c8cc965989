import assert from "node:assert/strict";
import { Catalogue } from "./catalogue.ts";
import { ALL_VERBS, type ResourceDefinition } from "./definition.ts";

function def(group: string, version: string, plural: string): ResourceDefinition {
  return {
    group,
    version,
    kind: plural,
    plural,
    singular: plural,
    namespaced: true,
    verbs: ALL_VERBS,
    schema: plural,
  };
}

Deno.test("catalogue: definitions come and go at runtime", () => {
  const cm = def("", "v1", "configmaps");
  const c = new Catalogue([cm]);
  let changes = 0;
  const off = c.onChange(() => changes++);
  assert.equal(c.revision, 0);

  const widgets = def("ssa.example.com", "v1", "widgets");
  c.add(widgets);
  assert.equal(c.lookup("ssa.example.com", "v1", "widgets"), widgets);
  assert.deepEqual(c.groups(), [{ name: "ssa.example.com", versions: ["v1"] }]);
  assert.equal(c.revision, 1);
  assert.throws(() => c.add(def("ssa.example.com", "v1", "widgets")), /duplicate/);

  const renamed = def("ssa.example.com", "v2", "widgets");
  c.replace(widgets, renamed);
  assert.equal(c.lookup("ssa.example.com", "v1", "widgets"), undefined);
  assert.equal(c.lookup("ssa.example.com", "v2", "widgets"), renamed);
  assert.deepEqual(c.definitions, [cm, renamed]);
  assert.throws(() => c.replace(widgets, def("x.example.com", "v1", "xs")), /not in the catalogue/);

  assert.equal(c.remove(renamed), true);
  assert.equal(c.remove(renamed), false);
  assert.deepEqual(c.groups(), []);
  assert.equal(c.lookup("ssa.example.com", "v2", "widgets"), undefined);
  assert.equal(changes, 3);
  off();
  c.add(widgets);
  assert.equal(changes, 3);
  assert.equal(c.revision, 4);
});
