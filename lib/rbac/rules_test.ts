import { assertEquals } from "../../tests/assert.ts";
import type { Attributes } from "../auth/authorizer.ts";
import { normalizeRule, type PolicyRule, ruleAllows } from "./rules.ts";

const user = { username: "u", groups: [] };

function resource(
  verb: string,
  group: string,
  resource: string,
  more: Partial<Attributes> = {},
): Attributes {
  return { user, verb, resourceRequest: true, apiGroup: group, resource, ...more };
}

function path(verb: string, path: string): Attributes {
  return { user, verb, resourceRequest: false, path };
}

/** [rule, request, allowed] */
const CASES: [PolicyRule, Attributes, boolean][] = [
  // verbs
  [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }, resource("get", "", "pods"), true],
  [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }, resource("list", "", "pods"), false],
  [{ verbs: ["*"], apiGroups: [""], resources: ["pods"] }, resource("delete", "", "pods"), true],
  [{ verbs: [], apiGroups: [""], resources: ["pods"] }, resource("get", "", "pods"), false],
  // groups
  [
    { verbs: ["get"], apiGroups: ["apps"], resources: ["pods"] },
    resource("get", "", "pods"),
    false,
  ],
  [
    { verbs: ["get"], apiGroups: ["*"], resources: ["pods"] },
    resource("get", "x.io", "pods"),
    true,
  ],
  [
    { verbs: ["get"], apiGroups: ["coordination.k8s.io"], resources: ["leases"] },
    resource("get", "coordination.platform.io", "leases"),
    true,
  ],
  // Custom groups have one spelling.
  [
    { verbs: ["get"], apiGroups: ["widgets.k8s.io"], resources: ["widgets"] },
    resource("get", "widgets.platform.io", "widgets"),
    false,
  ],
  [
    { verbs: ["get"], apiGroups: ["widgets.platform.io"], resources: ["widgets"] },
    resource("get", "widgets.k8s.io", "widgets"),
    false,
  ],
  [
    { verbs: ["get"], apiGroups: ["widgets.k8s.io"], resources: ["widgets"] },
    resource("get", "widgets.k8s.io", "widgets"),
    true,
  ],
  // resources and subresources
  [{ verbs: ["get"], apiGroups: [""], resources: ["*"] }, resource("get", "", "pods"), true],
  [
    { verbs: ["get"], apiGroups: [""], resources: ["*"] },
    resource("get", "", "pods", { subresource: "log" }),
    true,
  ],
  [
    { verbs: ["get"], apiGroups: [""], resources: ["pods"] },
    resource("get", "", "pods", { subresource: "log" }),
    false,
  ],
  [
    { verbs: ["get"], apiGroups: [""], resources: ["pods/log"] },
    resource("get", "", "pods", { subresource: "log" }),
    true,
  ],
  [
    { verbs: ["get"], apiGroups: [""], resources: ["pods/log"] },
    resource("get", "", "pods"),
    false,
  ],
  [
    { verbs: ["update"], apiGroups: ["*"], resources: ["*/status"] },
    resource("update", "x.io", "things", { subresource: "status" }),
    true,
  ],
  [
    { verbs: ["update"], apiGroups: ["*"], resources: ["*/status"] },
    resource("update", "x.io", "things", { subresource: "scale" }),
    false,
  ],
  [
    { verbs: ["update"], apiGroups: ["*"], resources: ["*/status"] },
    resource("update", "x.io", "things"),
    false,
  ],
  // resourceNames: a named rule never allows a request without that name
  [
    { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] },
    resource("get", "", "secrets", { name: "a" }),
    true,
  ],
  [
    { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] },
    resource("get", "", "secrets", { name: "b" }),
    false,
  ],
  [
    { verbs: ["list"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] },
    resource("list", "", "secrets"),
    false,
  ],
  [
    { verbs: ["create"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] },
    resource("create", "", "secrets"),
    false,
  ],
  [
    { verbs: ["get"], apiGroups: [""], resources: ["secrets"] },
    resource("get", "", "secrets", { name: "any" }),
    true,
  ],
  // non-resource URLs
  [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }, path("get", "/healthz"), true],
  [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }, path("get", "/healthz/etcd"), false],
  [{ verbs: ["get"], nonResourceURLs: ["/healthz*"] }, path("get", "/healthz/etcd"), true],
  [{ verbs: ["get"], nonResourceURLs: ["/apis/*"] }, path("get", "/apis/x.io/v1"), true],
  [{ verbs: ["get"], nonResourceURLs: ["/apis/*"] }, path("get", "/apis"), false],
  [{ verbs: ["get"], nonResourceURLs: ["*"] }, path("get", "/anything"), true],
  [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }, path("post", "/healthz"), false],
  // resource rules never match paths, URL rules never match resources
  [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, path("get", "/healthz"), false],
  [{ verbs: ["*"], nonResourceURLs: ["*"] }, resource("get", "", "pods"), false],
];

Deno.test("ruleAllows: verbs, groups, resources, subresources, names and URLs", () => {
  for (const [rule, request, allowed] of CASES) {
    assertEquals(
      ruleAllows(request, normalizeRule(rule)),
      allowed,
      `${JSON.stringify(rule)} vs ${JSON.stringify({ ...request, user: undefined })}`,
    );
  }
});

Deno.test("normalizeRule fills every list and respells groups", () => {
  assertEquals(normalizeRule({ verbs: ["get"], apiGroups: ["rbac.authorization.k8s.io", ""] }), {
    verbs: ["get"],
    apiGroups: ["rbac.authorization.platform.io", ""],
    resources: [],
    resourceNames: [],
    nonResourceURLs: [],
  });
});
