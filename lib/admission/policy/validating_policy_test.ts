import assert from "node:assert/strict";
import {
  type AdmissionAttributes,
  AdmissionChain,
  bindingOf,
  type PolicyEnvironment,
  policyOf,
  validatingAdmissionPolicy,
  VALIDATION_FAILURE_ANNOTATION,
} from "../mod.ts";
import { type KubeObject, silentLogger } from "../../api/mod.ts";
import { rejection } from "../webhook/webhook_testdata.ts";
import { Catalogue, ResourceRegistry } from "../../registry/mod.ts";
import { builtinDefinitions } from "../../resources/mod.ts";
import { SchemaSet } from "../../schema/mod.ts";
import { MemoryStore } from "../../storage/mod.ts";

const ALICE = { user: { username: "alice", groups: ["dev"] } };
const CONFIGMAP_RULES = {
  resourceRules: [{
    operations: ["CREATE", "UPDATE"],
    apiGroups: [""],
    apiVersions: ["v1"],
    resources: ["configmaps"],
  }],
};

function policy(name: string, spec: KubeObject): KubeObject {
  return { metadata: { name }, spec: { matchConstraints: CONFIGMAP_RULES, ...spec } };
}

function binding(name: string, policyName: string, spec: KubeObject = {}): KubeObject {
  return { metadata: { name }, spec: { policyName, validationActions: ["Deny"], ...spec } };
}

function fixture(objects: { policies: KubeObject[]; bindings: KubeObject[] }) {
  const params: Record<string, KubeObject> = {
    "prod/limits": { metadata: { name: "limits", namespace: "prod" }, data: { max: "2" } },
  };
  const warned: string[] = [];
  const env: PolicyEnvironment = {
    source: {
      current: () =>
        Promise.resolve({
          policies: new Map(objects.policies.map((p) => [p.metadata.name, policyOf(p)])),
          bindings: objects.bindings.map(bindingOf),
        }),
    },
    namespace: (name) => Promise.resolve({ metadata: { name, labels: { env: name } } }),
    equivalents: () => [],
    params: (kind, q) => {
      if (kind.kind !== "ConfigMap") return Promise.resolve(undefined);
      const p = params[`${q.namespace}/${q.name}`];
      return Promise.resolve(p ? [p] : []);
    },
    logger: { ...silentLogger, warn: (m: string) => void warned.push(m) },
  };
  const store = new MemoryStore();
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const plugin = validatingAdmissionPolicy(env);
  const admission = new AdmissionChain([plugin]);
  const registry = new ResourceRegistry(def, { store, schemas: SchemaSet.builtin(), admission });
  return { registry, plugin, warned, [Symbol.asyncDispose]: () => store.close() };
}

const cm = (name: string, data: Record<string, string> = {}) => ({ metadata: { name }, data });

Deno.test("policy: a failed validation denies with its reason and message; passing objects are stored", async () => {
  await using fx = fixture({
    policies: [policy("small", {
      validations: [
        { expression: "size(object.data) <= 2", message: "too many keys" },
        {
          expression: "!has(object.data.secret)",
          reason: "Forbidden",
          messageExpression: "'no secret in ' + object.metadata.name",
        },
        { expression: "object.metadata.name != 'reserved'" },
      ],
    })],
    bindings: [binding("small-binding", "small")],
  });
  await fx.registry.create("prod", cm("ok", { a: "1" }), ALICE);
  const big = await rejection(
    fx.registry.create("prod", cm("big", { a: "1", b: "2", c: "3" }), ALICE),
  );
  assert.equal(big.code, 422);
  assert.equal(
    big.message,
    "ValidatingAdmissionPolicy 'small' with binding 'small-binding' denied request: too many keys",
  );
  const secret = await rejection(fx.registry.create("prod", cm("s", { secret: "x" }), ALICE));
  assert.equal(secret.code, 403);
  assert.match(secret.message, /denied request: no secret in s$/);
  const reserved = await rejection(fx.registry.create("prod", cm("reserved"), ALICE));
  assert.match(
    reserved.message,
    /denied request: failed expression: object.metadata.name != 'reserved'$/,
  );
});

Deno.test("policy: Warn and Audit actions let the request through and say why", async () => {
  await using fx = fixture({
    policies: [
      policy("named", {
        validations: [{
          expression: "object.metadata.name.startsWith('team-')",
          message: "use a team- prefix",
        }],
      }),
    ],
    bindings: [binding("named-binding", "named", { validationActions: ["Warn", "Audit"] })],
  });
  const warnings: string[] = [];
  await fx.registry.create("prod", cm("x"), { ...ALICE, warnings });
  assert.deepEqual(warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'named' with binding 'named-binding': use a team- prefix",
  ]);
  const attrs = {
    operation: "CREATE",
    resource: { group: "", version: "v1", resource: "configmaps" },
    kind: { group: "", version: "v1", kind: "ConfigMap" },
    subresource: "",
    namespace: "prod",
    name: "y",
    object: cm("y"),
    user: ALICE.user,
    dryRun: false,
    warnings: [],
    auditAnnotations: {},
  } as AdmissionAttributes;
  await fx.plugin.validate!(attrs);
  assert.deepEqual(JSON.parse(attrs.auditAnnotations[VALIDATION_FAILURE_ANNOTATION]), [{
    message: "use a team- prefix",
    policy: "named",
    binding: "named-binding",
    expressionIndex: 0,
    validationActions: ["Warn", "Audit"],
  }]);
});

Deno.test("policy: params by reference, variables, match conditions, and a missing param", async () => {
  await using fx = fixture({
    policies: [policy("limited", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      matchConditions: [{
        name: "not-exempt",
        expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)",
      }],
      variables: [{ name: "keys", expression: "size(object.data)" }],
      validations: [{
        expression: "variables.keys <= int(params.data.max)",
        messageExpression: "'at most ' + params.data.max + ' keys'",
      }],
    })],
    bindings: [binding("limited-binding", "limited", { paramRef: { name: "limits" } })],
  });
  await fx.registry.create("prod", cm("two", { a: "1", b: "2" }), ALICE);
  const three = await rejection(
    fx.registry.create("prod", cm("three", { a: "1", b: "2", c: "3" }), ALICE),
  );
  assert.match(three.message, /denied request: at most 2 keys$/);
  await fx.registry.create(
    "prod",
    { metadata: { name: "exempt", labels: { exempt: "yes" } }, data: { a: "1", b: "2", c: "3" } },
    ALICE,
  );
  // No "limits" in dev: the binding's parameterNotFoundAction (default Deny) decides.
  const missing = await rejection(fx.registry.create("dev", cm("x"), ALICE));
  assert.equal(missing.code, 403);
  assert.match(
    missing.message,
    /no params found for policy binding with `Deny` parameterNotFoundAction/,
  );
});

Deno.test("policy: failurePolicy decides for expressions that fail at runtime", async () => {
  const broken = (failurePolicy: string) =>
    policy(`broken-${failurePolicy}`, {
      failurePolicy,
      validations: [{ expression: "object.spec.replicas > 1" }],
    });
  await using fail = fixture({
    policies: [broken("Fail")],
    bindings: [binding("b", "broken-Fail")],
  });
  const err = await rejection(fail.registry.create("prod", cm("x"), ALICE));
  assert.match(
    err.message,
    /denied request: expression 'object.spec.replicas > 1' resulted in error: /,
  );
  await using ignore = fixture({
    policies: [broken("Ignore")],
    bindings: [binding("b", "broken-Ignore")],
  });
  await ignore.registry.create("prod", cm("x"), ALICE);
  assert.match(ignore.warned[0], /policy broken-Ignore: expression 'object.spec.replicas > 1'/);
});

Deno.test("policy: exclusions, resource names and the binding's match resources narrow what is checked", async () => {
  await using fx = fixture({
    policies: [policy("deny-all", {
      matchConstraints: {
        ...CONFIGMAP_RULES,
        excludeResourceRules: [{
          operations: ["*"],
          apiGroups: [""],
          apiVersions: ["v1"],
          resources: ["configmaps"],
          resourceNames: ["allowed"],
        }],
      },
      validations: [{ expression: "false", message: "no" }],
    })],
    bindings: [binding("prod-only", "deny-all", {
      matchResources: { namespaceSelector: { matchLabels: { env: "prod" } } },
    })],
  });
  await fx.registry.create("prod", cm("allowed"), ALICE);
  await fx.registry.create("dev", cm("anything"), ALICE);
  await rejection(fx.registry.create("prod", cm("other"), ALICE));
});
