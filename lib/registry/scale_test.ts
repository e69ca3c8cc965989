import assert from "node:assert/strict";
import { assertEquals } from "../../tests/assert.ts";
import { scaleOf } from "./scale.ts";

const paths = { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" };

Deno.test("scaleOf: the Scale of an object, from its paths", () => {
  const obj = {
    metadata: { name: "a", namespace: "ns", uid: "u", resourceVersion: "7", labels: { x: "y" } },
    spec: { replicas: 3, deep: { sel: "app=a" } },
    status: {},
  };
  assertEquals(scaleOf(obj, { ...paths, labelSelectorPath: ".spec.deep.sel" }), {
    found: true,
    scale: {
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: { name: "a", namespace: "ns", uid: "u", resourceVersion: "7" },
      spec: { replicas: 3 },
      status: { replicas: 0, selector: "app=a" },
    },
  });
  // Without spec replicas: 0, and the caller learns there were none.
  const none = scaleOf({ metadata: { name: "b" } }, paths);
  assertEquals([none.found, none.scale.spec], [false, {}]);
  assert.throws(() => scaleOf({ metadata: { name: "c" }, spec: { replicas: "x" } }, paths));
});
