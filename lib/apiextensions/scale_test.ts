import { assertEquals } from "../../tests/assert.ts";
import { fieldErrorMessage } from "../api/mod.ts";
import { scalePathsOf, validateScaleFields, validateScaleSubresource } from "./scale.ts";

const paths = {
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
  labelSelectorPath: ".status.selector",
};

Deno.test("scale: CRD paths are checked as kube checks them", () => {
  const at = "spec.versions[0].subresources";
  const msgs = (scale: unknown) => validateScaleSubresource(scale, at).map(fieldErrorMessage);
  assertEquals(msgs(paths), []);
  assertEquals(msgs(undefined), []);
  assertEquals(msgs({}), [
    `${at}.scale.specReplicasPath: Required value`,
    `${at}.scale.statusReplicasPath: Required value`,
  ]);
  assertEquals(
    msgs({
      specReplicasPath: ".status.replicas",
      statusReplicasPath: "status.replicas",
      labelSelectorPath: ".metadata.labels",
    }),
    [
      `${at}.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec`,
      `${at}.scale.statusReplicasPath: Invalid value: "status.replicas": must be a simple json path starting with .`,
      `${at}.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status`,
    ],
  );
  assertEquals(scalePathsOf({ subresources: { scale: paths } }), paths);
  assertEquals(scalePathsOf({ subresources: { status: {} } }), undefined);
});

Deno.test("scale: objects of a scaled version keep replicas in int32 and the selector a string", () => {
  const msgs = (obj: unknown) => validateScaleFields(obj, paths).map(fieldErrorMessage);
  assertEquals(msgs({ spec: { replicas: 3 }, status: { replicas: 0, selector: "a=b" } }), []);
  assertEquals(msgs({}), []);
  assertEquals(msgs({ spec: { replicas: -1 }, status: { replicas: 2147483648 } }), [
    ".spec.replicas: Invalid value: -1: should be a non-negative integer",
    ".status.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647",
  ]);
  assertEquals(msgs({ spec: "x", status: { selector: 1 } }), [
    '.spec.replicas: Invalid value: 0: .spec.replicas accessor error: "x" is of the type string, expected map[string]interface{}',
    '.status.selector: Invalid value: "": .status.selector accessor error: 1 is of the type int64, expected string',
  ]);
  assertEquals(validateScaleFields({ spec: { replicas: -1 } }, undefined), []);
});
