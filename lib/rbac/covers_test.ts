import { assertEquals } from "../../tests/assert.ts";
import {
  breakdownRule,
  compactRules,
  compactString,
  goQuotedList,
  uncoveredRules,
} from "./covers.ts";
import { normalizeRule, type PolicyRule } from "./rules.ts";

const n = (rules: PolicyRule[]) => rules.map(normalizeRule);
const covered = (owner: PolicyRule[], servant: PolicyRule[]) =>
  uncoveredRules(n(owner), n(servant)).length === 0;

Deno.test("covers: wildcards and exact matches", () => {
  const all = [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }];
  assertEquals(covered(all, [{ verbs: ["get"], apiGroups: ["x"], resources: ["y/z"] }]), true);
  assertEquals(covered(all, [{ verbs: ["get"], nonResourceURLs: ["/x"] }]), false);
  const pods = [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] }];
  assertEquals(covered(pods, [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }]), true);
  assertEquals(covered(pods, [{ verbs: ["watch"], apiGroups: [""], resources: ["pods"] }]), false);
  assertEquals(covered(pods, [{ verbs: ["*"], apiGroups: [""], resources: ["pods"] }]), false);
  assertEquals(covered(pods, [{ verbs: ["get"], apiGroups: ["*"], resources: ["pods"] }]), false);
  assertEquals(covered(pods, [{ verbs: ["get"], apiGroups: [""], resources: ["*"] }]), false);
  // An empty servant rule grants nothing.
  assertEquals(covered([], [{ verbs: ["get"], apiGroups: [], resources: [] }]), true);
  assertEquals(covered([], []), true);
});

Deno.test("covers: subresources", () => {
  const status = [{ verbs: ["update"], apiGroups: [""], resources: ["*/status"] }];
  assertEquals(
    covered(status, [{ verbs: ["update"], apiGroups: [""], resources: ["pods/status"] }]),
    true,
  );
  assertEquals(
    covered(status, [{ verbs: ["update"], apiGroups: [""], resources: ["pods"] }]),
    false,
  );
  const pods = [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }];
  assertEquals(
    covered(pods, [{ verbs: ["get"], apiGroups: [""], resources: ["pods/log"] }]),
    false,
  );
});

Deno.test("covers: resource names", () => {
  const named = [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] }];
  const any = [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }];
  // A rule without names grants all names: a named owner does not cover it.
  assertEquals(covered(named, any), false);
  assertEquals(covered(any, named), true);
  assertEquals(covered(named, named), true);
  assertEquals(
    covered(named, [{ ...named[0], resourceNames: ["a", "b"] }]),
    false,
  );
});

Deno.test("covers: non-resource URLs, with prefix stars", () => {
  const apis = [{ verbs: ["get"], nonResourceURLs: ["/apis/*", "/healthz"] }];
  assertEquals(covered(apis, [{ verbs: ["get"], nonResourceURLs: ["/apis/x/v1"] }]), true);
  assertEquals(covered(apis, [{ verbs: ["get"], nonResourceURLs: ["/apis/*"] }]), true);
  assertEquals(covered(apis, [{ verbs: ["get"], nonResourceURLs: ["/apis"] }]), false);
  assertEquals(covered(apis, [{ verbs: ["get"], nonResourceURLs: ["/healthz/x"] }]), false);
  assertEquals(covered(apis, [{ verbs: ["get"], nonResourceURLs: ["*"] }]), false);
  assertEquals(covered([{ verbs: ["get"], nonResourceURLs: ["*"] }], apis), true);
});

Deno.test("covers: groups in either spelling are the same group", () => {
  assertEquals(
    covered(
      [{ verbs: ["get"], apiGroups: ["rbac.authorization.platform.io"], resources: ["roles"] }],
      [{ verbs: ["get"], apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"] }],
    ),
    true,
  );
});

Deno.test("breakdownRule: one verb, group, resource and name each; URLs with verbs", () => {
  const parts = breakdownRule(normalizeRule({
    verbs: ["get", "list"],
    apiGroups: [""],
    resources: ["a", "b"],
    resourceNames: ["x"],
    nonResourceURLs: ["/u"],
  }));
  assertEquals(parts.map(compactString), [
    '{APIGroups:[""], Resources:["a"], ResourceNames:["x"], Verbs:["get"]}',
    '{APIGroups:[""], Resources:["a"], ResourceNames:["x"], Verbs:["list"]}',
    '{APIGroups:[""], Resources:["b"], ResourceNames:["x"], Verbs:["get"]}',
    '{APIGroups:[""], Resources:["b"], ResourceNames:["x"], Verbs:["list"]}',
    '{NonResourceURLs:["/u"], Verbs:["get"]}',
    '{NonResourceURLs:["/u"], Verbs:["list"]}',
  ]);
});

Deno.test("compactRules joins the verbs of one group and resource", () => {
  const missing = uncoveredRules(
    [],
    n([
      { verbs: ["get", "delete"], apiGroups: [""], resources: ["secrets", "configmaps"] },
      { verbs: ["get"], nonResourceURLs: ["/x"] },
    ]),
  );
  assertEquals(compactRules(missing).map(compactString), [
    '{NonResourceURLs:["/x"], Verbs:["get"]}',
    '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    '{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "delete"]}',
  ]);
  assertEquals(goQuotedList(["a", 'b"c']), '["a" "b\\"c"]');
});
