import assert from "node:assert/strict";
import { typeCheckPolicy } from "./type_check.ts";
import { SchemaSet } from "../../schema/mod.ts";

const KINDS: Record<string, { apiVersion: string; kind: string; schema: string }> = {
  "/v1/configmaps": { apiVersion: "v1", kind: "ConfigMap", schema: "io.k8s.api.core.v1.ConfigMap" },
  "coordination.platform.io/v1/leases": {
    apiVersion: "coordination.platform.io/v1",
    kind: "Lease",
    schema: "io.k8s.api.coordination.v1.Lease",
  },
};
const resolve = (g: string, v: string, r: string) =>
  KINDS[`${g.replace(".k8s.io", ".platform.io")}/${v}/${r}`];

function policy(rules: unknown[], spec: Record<string, unknown>) {
  return { metadata: { name: "p" }, spec: { matchConstraints: { resourceRules: rules }, ...spec } };
}

const CONFIGMAPS = { apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] };

Deno.test("typeChecking: fields the kind lacks and wrong types are warned about, per expression", () => {
  const p = policy([CONFIGMAPS], {
    validations: [
      { expression: "size(object.data) <= 3 && object.metadata.name.startsWith('a')" },
      { expression: "object.spec.replicas > 1" },
      { expression: "true", messageExpression: "object.metadata.name + 1" },
    ],
    variables: [{ name: "keys", expression: "object.binaryData" }],
  });
  const { expressionWarnings } = typeCheckPolicy(p, SchemaSet.builtin(), resolve);
  assert.deepEqual(expressionWarnings.map((w) => w.fieldRef), [
    "spec.validations[1].expression",
    "spec.validations[2].messageExpression",
  ]);
  assert.match(
    expressionWarnings[0].warning,
    /^v1, Kind=ConfigMap: ERROR: undefined field 'spec' of io\.k8s\.api\.core\.v1\.ConfigMap/,
  );
});

Deno.test("typeChecking: every named kind is checked; wildcards and unknown kinds are not", () => {
  const leases = { apiGroups: ["coordination.k8s.io"], apiVersions: ["v1"], resources: ["leases"] };
  const both = policy([CONFIGMAPS, leases], {
    validations: [{ expression: "has(object.spec.holderIdentity)" }],
  });
  const [w] = typeCheckPolicy(both, SchemaSet.builtin(), resolve).expressionWarnings;
  assert.match(w.warning, /^v1, Kind=ConfigMap: ERROR: undefined field 'spec'/);
  assert.ok(!w.warning.includes("Kind=Lease"), w.warning);
  const wild = policy([{ apiGroups: ["*"], apiVersions: ["v1"], resources: ["configmaps"] }], {
    validations: [{ expression: "object.nothing == 1" }],
  });
  assert.deepEqual(typeCheckPolicy(wild, SchemaSet.builtin(), resolve).expressionWarnings, []);
  const unknown = policy([{ apiGroups: ["x.io"], apiVersions: ["v1"], resources: ["things"] }], {
    validations: [{ expression: "object.nothing == 1" }],
  });
  assert.deepEqual(typeCheckPolicy(unknown, SchemaSet.builtin(), resolve).expressionWarnings, []);
});
