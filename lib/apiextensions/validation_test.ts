import { assertEquals } from "../../tests/assert.ts";
import { validateCustomResourceDefinition } from "./validation.ts";

function crd(group: string) {
  return {
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object" } },
      }],
    },
  };
}

Deno.test("crd validation: a built-in group is refused in either spelling", () => {
  for (const group of ["rbac.authorization.k8s.io", "certificates.platform.io", "meta.k8s.io"]) {
    const groupErrors = validateCustomResourceDefinition(crd(group))
      .filter((e) => e.field === "spec.group");
    assertEquals(groupErrors.map((e) => [e.type, e.value]), [["Invalid", group]], group);
  }
  for (const group of ["widgets.k8s.io", "example.com", "tools.platform.io"]) {
    assertEquals(validateCustomResourceDefinition(crd(group)), [], group);
  }
});
