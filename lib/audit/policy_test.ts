import nodeAssert from "node:assert/strict";

const assert = (v: unknown, msg?: string) => nodeAssert.ok(v, msg);
const assertEquals = (a: unknown, b: unknown, msg?: string) => nodeAssert.deepEqual(a, b, msg);
function assertThrows(fn: () => unknown, E: new (...a: never[]) => Error): Error {
  try {
    fn();
  } catch (err) {
    nodeAssert.ok(err instanceof E, String(err));
    return err;
  }
  throw new Error("did not throw");
}
import { ConfigError } from "../config/mod.ts";
import { type AuditAttributes, parseAuditPolicy, PolicyEvaluator } from "./policy.ts";

const HEAD = { apiVersion: "audit.platform.io/v1", kind: "Policy" };

function evaluator(doc: Record<string, unknown>): PolicyEvaluator {
  return new PolicyEvaluator(parseAuditPolicy({ ...HEAD, ...doc }, "p.yaml"));
}

const alice = { username: "alice", groups: ["staff", "system:authenticated"] };

function res(a: Partial<AuditAttributes>): AuditAttributes {
  return {
    user: alice,
    verb: "get",
    resourceRequest: true,
    path: "/api/v1/namespaces/default/pods/p",
    namespace: "default",
    apiGroup: "",
    resource: "pods",
    subresource: "",
    name: "p",
    ...a,
  };
}

function nonRes(path: string, verb = "get"): AuditAttributes {
  return { user: alice, verb, resourceRequest: false, path };
}

Deno.test("audit policy: the first matching rule decides; no match is None", () => {
  const p = evaluator({
    rules: [
      { level: "None", users: ["system:kube-proxy"] },
      { level: "RequestResponse", resources: [{ group: "", resources: ["secrets"] }] },
      { level: "Request", verbs: ["create"] },
      { level: "Metadata", userGroups: ["staff"] },
    ],
  });
  assertEquals(
    p.evaluate(res({ user: { username: "system:kube-proxy", groups: [] } })).level,
    "None",
  );
  assertEquals(p.evaluate(res({ resource: "secrets" })).level, "RequestResponse");
  assertEquals(p.evaluate(res({ verb: "create" })).level, "Request");
  assertEquals(p.evaluate(res({})).level, "Metadata");
  assertEquals(p.evaluate(res({ user: { username: "bob", groups: ["dev"] } })).level, "None");
  assertEquals(p.evaluate(res({ user: undefined })).level, "None");
});

Deno.test("audit policy: resources, subresource forms, resourceNames, groups, namespaces", () => {
  const level = (rule: Record<string, unknown>, a: Partial<AuditAttributes>) =>
    evaluator({ rules: [{ level: "Metadata", ...rule }] }).evaluate(res(a)).level;
  const pods = (resources: string[], resourceNames?: string[]) => ({
    resources: [{ group: "", resources, ...(resourceNames ? { resourceNames } : {}) }],
  });
  assertEquals(level(pods(["pods"]), {}), "Metadata");
  assertEquals(level(pods(["pods"]), { subresource: "status" }), "None");
  assertEquals(level(pods(["pods/status"]), { subresource: "status" }), "Metadata");
  assertEquals(level(pods(["pods/status"]), {}), "None");
  assertEquals(level(pods(["*/status"]), { resource: "nodes", subresource: "status" }), "Metadata");
  assertEquals(level(pods(["*/status"]), { resource: "nodes" }), "None");
  assertEquals(level(pods(["pods/*"]), { subresource: "log" }), "Metadata");
  assertEquals(level(pods(["pods/*"]), {}), "Metadata");
  assertEquals(level(pods(["pods/*"]), { resource: "nodes", subresource: "log" }), "None");
  assertEquals(level(pods(["*"]), { resource: "anything", subresource: "x" }), "Metadata");
  assertEquals(level(pods(["pods"], ["p"]), {}), "Metadata");
  assertEquals(level(pods(["pods"], ["q"]), {}), "None");
  // An empty resources list is every resource of the group.
  assertEquals(level({ resources: [{ group: "apps" }] }, { apiGroup: "apps" }), "Metadata");
  assertEquals(level({ resources: [{ group: "apps" }] }, {}), "None");
  // Kube's group names are read in their canonical spelling.
  assertEquals(
    level({ resources: [{ group: "rbac.authorization.k8s.io" }] }, {
      apiGroup: "rbac.authorization.platform.io",
    }),
    "Metadata",
  );
  // Namespaces: "" is cluster scope; resource rules never match non-resource requests.
  assertEquals(level({ namespaces: ["default"] }, {}), "Metadata");
  assertEquals(level({ namespaces: ["kube-system"] }, {}), "None");
  assertEquals(level({ namespaces: [""] }, { namespace: "" }), "Metadata");
  const p = evaluator({ rules: [{ level: "Metadata", namespaces: ["default"] }] });
  assertEquals(p.evaluate(nonRes("/version")).level, "None");
});

Deno.test("audit policy: nonResourceURLs, exact and by prefix", () => {
  const p = evaluator({
    rules: [
      { level: "None", nonResourceURLs: ["/healthz*", "/version"] },
      { level: "Metadata", nonResourceURLs: ["*"] },
      { level: "Request" },
    ],
  });
  assertEquals(p.evaluate(nonRes("/healthz")).level, "None");
  assertEquals(p.evaluate(nonRes("/healthz/ping")).level, "None");
  assertEquals(p.evaluate(nonRes("/version")).level, "None");
  assertEquals(p.evaluate(nonRes("/version/x")).level, "Metadata");
  assertEquals(p.evaluate(nonRes("/openapi/v3")).level, "Metadata");
  // A non-resource rule does not match resource requests.
  assertEquals(p.evaluate(res({})).level, "Request");
});

Deno.test("audit policy: omitStages is the union of the policy's and the rule's; omitManagedFields the rule's over the policy's", () => {
  const p = evaluator({
    omitStages: ["RequestReceived"],
    omitManagedFields: true,
    rules: [
      { level: "Request", verbs: ["create"], omitStages: ["Panic"], omitManagedFields: false },
      { level: "Metadata" },
    ],
  });
  const create = p.evaluate(res({ verb: "create" }));
  assertEquals([...create.omitStages].sort(), ["Panic", "RequestReceived"]);
  assertEquals(create.omitManagedFields, false);
  const get = p.evaluate(res({}));
  assertEquals([...get.omitStages], ["RequestReceived"]);
  assertEquals(get.omitManagedFields, true);
});

Deno.test("audit policy: kube's apiVersion is accepted", () => {
  const p = parseAuditPolicy(
    { apiVersion: "audit.k8s.io/v1", kind: "Policy", rules: [{ level: "Metadata" }] },
    "p.yaml",
  );
  assertEquals(p.rules.length, 1);
});

Deno.test("audit policy: every validation message, with its field path", () => {
  const cases: [unknown, string[]][] = [
    [null, [
      "p.yaml: the file is empty; expected apiVersion: audit.platform.io/v1 and kind: Policy",
    ]],
    [[1], ["p.yaml: expected a mapping, got a list"]],
    [{ ...HEAD }, ["p.yaml: rules: Required value"]],
    [{ ...HEAD, rules: [] }, ["p.yaml: rules: Required value: a policy needs at least one rule"]],
    [
      { apiVersion: "audit.k8s.io/v1beta1", kind: "Policy", rules: [{ level: "None" }] },
      [
        'p.yaml: apiVersion: Unsupported value: "audit.k8s.io/v1beta1": supported values: ' +
        '"audit.platform.io/v1", "audit.k8s.io/v1"',
      ],
    ],
    [
      { apiVersion: "audit.k8s.io/v1", kind: "PolicyList", rules: [{ level: "None" }] },
      ['p.yaml: kind: Unsupported value: "PolicyList": supported values: "Policy"'],
    ],
    [
      { ...HEAD, rules: [{ level: "Loud" }] },
      [
        'p.yaml: rules[0].level: Unsupported value: "Loud": supported values: "None", ' +
        '"Metadata", "Request", "RequestResponse"',
      ],
    ],
    [
      { ...HEAD, rules: [{ users: ["a"] }] },
      ["p.yaml: rules[0].level: Required value"],
    ],
    [
      { ...HEAD, rules: [{ level: "None", usres: ["a"] }] },
      ["p.yaml: rules[0].usres: unknown field"],
    ],
    [
      { ...HEAD, omitStages: ["Done"], rules: [{ level: "None", omitStages: ["Started"] }] },
      [
        'p.yaml: omitStages[0]: Unsupported value: "Done": supported values: ' +
        '"RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"',
        'p.yaml: rules[0].omitStages[0]: Unsupported value: "Started": supported values: ' +
        '"RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"',
      ],
    ],
    [
      {
        ...HEAD,
        rules: [{ level: "None", nonResourceURLs: ["/x"], namespaces: ["default"] }],
      },
      [
        'p.yaml: rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both ' +
        "regular resources and non-resource URLs",
      ],
    ],
    [
      { ...HEAD, rules: [{ level: "None", nonResourceURLs: ["healthz", "/a*b"] }] },
      [
        'p.yaml: rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL ' +
        "rules must begin with a '/' character",
        'p.yaml: rules[0].nonResourceURLs[1]: Invalid value: "/a*b": non-resource URL ' +
        "wildcards '*' must be the final character of the rule",
      ],
    ],
    [
      { ...HEAD, rules: [{ level: "None", resources: [{ group: "Apps_" }] }] },
      [
        'p.yaml: rules[0].resources[0].group: Invalid value: "Apps_": a lowercase RFC 1123 ' +
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must " +
        "start and end with an alphanumeric character",
      ],
    ],
    [
      { ...HEAD, rules: [{ level: "None", resources: [{ resourceNames: ["x"] }] }] },
      [
        'p.yaml: rules[0].resources[0].resourceNames: Invalid value: ["x"]: using ' +
        "resourceNames requires at least one resource",
      ],
    ],
    [
      {
        ...HEAD,
        rules: [{ level: "None", resources: [{ resources: ["pods/*", "pods/log", "a/b/c"] }] }],
      },
      [
        'p.yaml: rules[0].resources[0].resources[1]: Invalid value: "pods/log": overlaps ' +
        '"pods/*": wildcards must not overlap other resources',
        'p.yaml: rules[0].resources[0].resources[2]: Invalid value: "a/b/c": must be a ' +
        "resource, resource/subresource, '*', '*/subresource' or 'resource/*'",
      ],
    ],
    [
      { ...HEAD, rules: [{ level: "None", resources: [{ resources: ["*", "pods"] }] }] },
      [
        'p.yaml: rules[0].resources[0].resources[1]: Invalid value: "pods": overlaps "*": ' +
        "wildcards must not overlap other resources",
      ],
    ],
    [
      {
        ...HEAD,
        rules: [{ level: "None", resources: [{ resources: ["*/status", "pods/status"] }] }],
      },
      [
        'p.yaml: rules[0].resources[0].resources[1]: Invalid value: "pods/status": overlaps ' +
        '"*/status": wildcards must not overlap other resources',
      ],
    ],
    [
      { ...HEAD, omitManagedFields: "yes", rules: [{ level: "None" }] },
      ['p.yaml: omitManagedFields: Invalid value: "yes": must be a boolean'],
    ],
  ];
  for (const [doc, messages] of cases) {
    const err = assertThrows(() => parseAuditPolicy(doc, "p.yaml"), ConfigError);
    assertEquals(err.message.split("\n"), messages, JSON.stringify(doc));
  }
});

Deno.test("audit policy: loadAuditPolicy names an unreadable file", async () => {
  const { loadAuditPolicy } = await import("./policy.ts");
  const err = await loadAuditPolicy("/nonexistent/policy.yaml").catch((e) => e);
  assert(err instanceof ConfigError);
  assert(err.message.startsWith('--audit-policy-file: cannot read "/nonexistent/policy.yaml"'));
});
