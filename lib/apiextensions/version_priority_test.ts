import assert from "node:assert/strict";
import { compareVersionPriority } from "./version_priority.ts";

Deno.test("version priority: kube's order", () => {
  const names = [
    "v1alpha1",
    "foo1",
    "v11alpha2",
    "v1beta1",
    "v1",
    "v12alpha1",
    "foo10",
    "v2",
    "v10beta3",
    "v11beta2",
    "v10",
  ];
  assert.deepEqual(names.sort(compareVersionPriority), [
    "v10",
    "v2",
    "v1",
    "v11beta2",
    "v10beta3",
    "v1beta1",
    "v12alpha1",
    "v11alpha2",
    "v1alpha1",
    "foo1",
    "foo10",
  ]);
});
