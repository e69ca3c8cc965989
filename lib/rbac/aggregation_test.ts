import { assertEquals } from "../../tests/assert.ts";
import { aggregatedRules } from "./aggregation.ts";

const role = (name: string, labels: Record<string, string>, verbs: string[]) => ({
  metadata: { name, labels },
  rules: [{ verbs, apiGroups: [""], resources: ["configmaps"] }],
});

Deno.test("aggregatedRules: selector by selector, roles by name, each rule once, never itself", () => {
  const agg = {
    metadata: { name: "agg", labels: { a: "1" } },
    aggregationRule: {
      clusterRoleSelectors: [{ matchLabels: { a: "1" } }, { matchLabels: { b: "1" } }],
    },
    rules: [{ verbs: ["stale"], apiGroups: [""], resources: ["x"] }],
  };
  const all = [
    agg,
    role("z", { a: "1" }, ["get"]),
    role("m", { a: "1", b: "1" }, ["list"]),
    role("b-only", { b: "1" }, ["watch"]),
    role("dup", { b: "1" }, ["get"]),
    role("other", {}, ["delete"]),
  ];
  assertEquals(aggregatedRules(agg, all)!.map((r) => r.verbs), [["list"], ["get"], ["watch"]]);
  assertEquals(
    aggregatedRules({ ...agg, aggregationRule: { clusterRoleSelectors: [{ matchLabels: {} }] } }, [
      agg,
    ]),
    [],
  );
  assertEquals(
    aggregatedRules({
      ...agg,
      aggregationRule: {
        clusterRoleSelectors: [{ matchExpressions: [{ key: "a", operator: "Bad" }] }],
      },
    }, all),
    undefined,
  );
});
