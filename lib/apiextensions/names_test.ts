import assert from "node:assert/strict";
import { checkNames, namesInUse } from "./names.ts";
import { builtinDefinitions } from "../resources/mod.ts";

function crd(group: string, names: Record<string, unknown>, status: Record<string, unknown> = {}) {
  return { metadata: { name: `${names.plural}.${group}` }, spec: { group, names }, status };
}

Deno.test("names: fresh names are accepted and establish the CRD", () => {
  const c = crd("a.example.com", {
    plural: "things",
    singular: "thing",
    kind: "Thing",
    listKind: "ThingList",
  });
  const r = checkNames(c, namesInUse("a.example.com", [], builtinDefinitions()));
  assert.deepEqual(r.acceptedNames, {
    plural: "things",
    singular: "thing",
    kind: "Thing",
    listKind: "ThingList",
  });
  assert.deepEqual(r.namesAccepted, {
    type: "NamesAccepted",
    status: "True",
    reason: "NoConflicts",
    message: "no conflicts found",
  });
  assert.deepEqual([r.established.status, r.established.reason], ["True", "InitialNamesAccepted"]);
});

Deno.test("names: conflicts with other CRDs of the group and with built-ins", () => {
  const other = crd("a.example.com", {}, {
    acceptedNames: {
      plural: "things",
      singular: "thing",
      kind: "Thing",
      listKind: "ThingList",
      shortNames: ["th"],
    },
  });
  const mine = crd("a.example.com", {
    plural: "widgets",
    singular: "widget",
    kind: "Thing",
    listKind: "WidgetList",
    shortNames: ["th", "w"],
  });
  const r = checkNames(mine, namesInUse("a.example.com", [other], []));
  // The last conflict found is reported (Kubernetes checks kinds after resource names).
  assert.deepEqual([r.namesAccepted.status, r.namesAccepted.reason, r.namesAccepted.message], [
    "False",
    "KindConflict",
    '"Thing" is already in use',
  ]);
  assert.deepEqual(r.acceptedNames, {
    plural: "widgets",
    singular: "widget",
    kind: "",
    listKind: "WidgetList",
  });
  assert.deepEqual([r.established.status, r.established.reason], ["False", "NotAccepted"]);
  // Another group does not conflict.
  assert.equal(
    checkNames(mine, namesInUse("b.example.com", [other], [])).namesAccepted.status,
    "True",
  );

  const csr = crd("certificates.platform.io", {
    plural: "certificatesigningrequests",
    kind: "Other",
  });
  const c = checkNames(csr, namesInUse("certificates.platform.io", [], builtinDefinitions()));
  assert.equal(c.namesAccepted.reason, "PluralConflict");
  assert.equal(c.acceptedNames.plural, "");
});

Deno.test("names: accepted names stay; an established CRD stays established", () => {
  const c = crd("a.example.com", { plural: "things", kind: "Thing", shortNames: ["t", "taken"] }, {
    acceptedNames: { plural: "things", kind: "Thing", shortNames: ["t"] },
    conditions: [{ type: "Established", status: "True", reason: "InitialNamesAccepted" }],
  });
  const used = { resources: new Set(["things", "t", "taken"]), kinds: new Set(["Thing"]) };
  const r = checkNames(c, used);
  assert.deepEqual([r.namesAccepted.reason, r.namesAccepted.message], [
    "ShortNamesConflict",
    '"taken" is already in use',
  ]);
  assert.deepEqual(r.acceptedNames.shortNames, ["t"]);
  assert.equal(r.established.status, "True");
});
