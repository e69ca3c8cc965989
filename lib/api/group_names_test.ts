import { assertEquals } from "../../tests/assert.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import {
  BUILTIN_GROUPS,
  canonicalGroup,
  isBuiltinGroup,
  toKubeApiVersion,
  toPlatformApiVersion,
} from "./group_names.ts";

Deno.test("group names: only built-in groups have a second spelling", () => {
  const cases: [string, string][] = [
    ["certificates.k8s.io", "certificates.platform.io"],
    ["certificates.platform.io", "certificates.platform.io"],
    ["rbac.authorization.k8s.io", "rbac.authorization.platform.io"],
    ["", ""],
    ["apps", "apps"],
    // Custom groups keep the one spelling they have.
    ["widgets.k8s.io", "widgets.k8s.io"],
    ["widgets.platform.io", "widgets.platform.io"],
    ["k8s.io", "k8s.io"],
    ["x.certificates.k8s.io", "x.certificates.k8s.io"],
  ];
  for (const [group, want] of cases) assertEquals(canonicalGroup(group), want, group);
  assertEquals(isBuiltinGroup("rbac.authorization.k8s.io"), true);
  assertEquals(isBuiltinGroup("rbac.authorization.platform.io"), true);
  assertEquals(isBuiltinGroup("widgets.k8s.io"), false);
  assertEquals(isBuiltinGroup(""), false);
});

Deno.test("group names: apiVersions are respelled for built-in groups only", () => {
  assertEquals(toPlatformApiVersion("certificates.k8s.io/v1"), "certificates.platform.io/v1");
  assertEquals(toPlatformApiVersion("widgets.k8s.io/v1"), "widgets.k8s.io/v1");
  assertEquals(toPlatformApiVersion("v1"), "v1");
  assertEquals(toKubeApiVersion("meta.platform.io/v1"), "meta.k8s.io/v1");
  assertEquals(toKubeApiVersion("widgets.platform.io/v1"), "widgets.platform.io/v1");
  assertEquals(toKubeApiVersion("v1"), "v1");
});

Deno.test("group names: every built-in resource's group is a built-in group", () => {
  for (const def of builtinDefinitions()) {
    if (def.group) assertEquals(BUILTIN_GROUPS.has(def.group), true, def.group);
  }
});
