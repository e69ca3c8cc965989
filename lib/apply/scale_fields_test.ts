import assert from "node:assert/strict";
import { parentManagedFields, scaleManagedFields } from "./scale_fields.ts";

const CTX = { specReplicasPath: ".spec.replicas", apiVersion: "db.example.com/v1" };
const REPLICAS = { "f:spec": { "f:replicas": {} } };
const entry = (manager: string, operation: string, apiVersion: string, fieldsV1: unknown) => ({
  manager,
  operation,
  apiVersion,
  time: "2026-01-01T00:00:00Z",
  fieldsType: "FieldsV1",
  fieldsV1,
});

Deno.test("scaleManagedFields: the replicas field's managers own spec.replicas", () => {
  const object = [
    entry("owner", "Apply", "db.example.com/v1", { "f:spec": { "f:replicas": {}, "f:a": {} } }),
    entry("other", "Update", "db.example.com/v1", { "f:spec": { "f:a": {} } }),
    entry("elsewhere", "Update", "other.example.com/v1", REPLICAS),
  ];
  assert.deepEqual(scaleManagedFields(object, CTX), [
    entry("owner", "Apply", "autoscaling/v1", REPLICAS),
  ]);
  assert.equal(scaleManagedFields(undefined, CTX), undefined);
});

Deno.test("parentManagedFields: lost ownership is taken away, new owners get the field", () => {
  const object = [
    entry("owner", "Apply", "db.example.com/v1", { "f:spec": { "f:replicas": {}, "f:a": {} } }),
    entry("keeper", "Apply", "db.example.com/v1", REPLICAS),
  ];
  // After the Scale's write: keeper still owns it, owner lost it, hpa applied it.
  const scale = [
    entry("keeper", "Apply", "autoscaling/v1", REPLICAS),
    { ...entry("hpa", "Apply", "autoscaling/v1", REPLICAS), subresource: "scale" },
  ];
  // Sorted as kube sorts them: same operation and time, so by manager.
  assert.deepEqual(parentManagedFields(object, scale, CTX), [
    { ...entry("hpa", "Apply", "db.example.com/v1", REPLICAS), subresource: "scale" },
    entry("keeper", "Apply", "db.example.com/v1", REPLICAS),
    entry("owner", "Apply", "db.example.com/v1", { "f:spec": { "f:a": {} } }),
  ]);
});
