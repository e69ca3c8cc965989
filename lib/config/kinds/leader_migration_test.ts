import assert from "node:assert/strict";
import { checkKindDocument } from "./registry.ts";

const errorsOf = (doc: Record<string, unknown>) => checkKindDocument(doc).errors;

Deno.test("LeaderMigrationConfiguration: defaults and kube's rules under every apiVersion", () => {
  for (
    const apiVersion of [
      "controllermanager.config.platform.io/v1alpha1",
      "controllermanager.config.k8s.io/v1alpha1",
      "controllermanager.config.k8s.io/v1beta1",
      "controllermanager.config.k8s.io/v1",
    ]
  ) {
    const doc = {
      apiVersion,
      kind: "LeaderMigrationConfiguration",
      leaderName: "migration",
      controllerLeaders: [{ name: "route", component: "*" }],
    };
    assert.deepEqual(checkKindDocument(doc), {
      errors: [],
      defaulted: { ...doc, resourceLock: "leases" },
    });
    assert.deepEqual(
      errorsOf({
        apiVersion,
        kind: "LeaderMigrationConfiguration",
        resourceLock: "configmaps",
        controllerLeaders: [{ component: "*" }],
      }),
      [
        "leaderName: Required value: leaderName must be set for LeaderMigrationConfiguration",
        "resourceLock: Invalid value: \"configmaps\": resource Lock must be one of 'leases' or 'endpoints'",
        "controllerLeaders[0].name: Required value: name must be set",
      ],
    );
  }
});
