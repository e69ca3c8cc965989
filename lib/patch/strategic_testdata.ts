/**
 * Test fixtures for the strategic merge patch tests: the test schemas (apps/v1 Deployment,
 * ConfigMap, Namespace, and the abstract schema with one field per patch strategy), an apply
 * on frozen inputs, and the check of a StatusError's code and text.
 *
 * @module
 */

import assert from "node:assert/strict";
import { StatusError } from "../api/errors.ts";
import { type SchemaNode, SchemaSet } from "../schema/schema_set.ts";
import { type FieldType, typeOf } from "../schema/typed.ts";
import { applyStrategicMergePatch } from "./strategic.ts";

export type Json = Record<string, unknown>;

export const TESTDATA = new URL("../../testdata/", import.meta.url);

export function readJson(name: string): unknown {
  return JSON.parse(Deno.readTextFileSync(new URL(name, TESTDATA)));
}

export const schemas = SchemaSet.builtin().extend(
  readJson("smp-schema.json") as Record<string, SchemaNode>,
);

export const TYPES: Record<string, FieldType> = {
  deploy: typeOf(schemas, "io.k8s.api.apps.v1.Deployment"),
  cm: typeOf(schemas, "io.k8s.api.core.v1.ConfigMap"),
  ns: typeOf(schemas, "io.k8s.api.core.v1.Namespace"),
};

// ---- helpers ----

export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Applies with frozen inputs, so any mutation of doc or patch throws. */
export function apply(doc: Json, patch: unknown, type: FieldType): Json {
  return applyStrategicMergePatch(
    deepFreeze(structuredClone(doc)),
    deepFreeze(structuredClone(patch)),
    type,
  );
}

export function assertStatus(fn: () => unknown, code: number, text: string): StatusError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof StatusError, `expected a StatusError, got ${caught}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.reason, code === 400 ? "BadRequest" : "Invalid");
  assert.ok(caught.message.includes(text), `${JSON.stringify(caught.message)} lacks ${text}`);
  return caught;
}

// ---- the abstract schema of the behaviours the vectors do not cover ----

export const ITEM = "test.smp.MergeItem";
export const REF = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Modelled on the upstream test schema: one field per patch strategy. */
export const abstractSchemas = SchemaSet.builtin().extend({
  [ITEM]: {
    type: "object",
    properties: {
      name: { type: "string" },
      value: { type: "string" },
      other: { type: "string" },
      mergingList: {
        type: "array",
        items: REF(ITEM),
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": "name",
      },
      nonMergingList: { type: "array", items: REF(ITEM) },
      mergingIntList: {
        type: "array",
        items: { type: "integer" },
        "x-kubernetes-patch-strategy": "merge",
      },
      nonMergingIntList: { type: "array", items: { type: "integer" } },
      // A list type but no patch markers: SMP replaces it.
      setList: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
      mapList: {
        type: "array",
        items: REF(ITEM),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      },
      simpleMap: { type: "object", additionalProperties: { type: "string" } },
      replacingMap: {
        type: "object",
        additionalProperties: { type: "string" },
        "x-kubernetes-patch-strategy": "replace",
      },
      retainKeysMap: {
        ...REF("test.smp.RetainKeysMap"),
        "x-kubernetes-patch-strategy": "retainKeys",
      },
      retainKeysMergingList: {
        type: "array",
        items: REF(ITEM),
        "x-kubernetes-patch-strategy": "merge,retainKeys",
        "x-kubernetes-patch-merge-key": "name",
      },
      listOfLists: {
        type: "array",
        items: { type: "array", items: { type: "string" } },
        "x-kubernetes-patch-strategy": "merge",
      },
      free: { "x-kubernetes-preserve-unknown-fields": true },
    },
  },
  "test.smp.RetainKeysMap": {
    type: "object",
    properties: {
      name: { type: "string" },
      value: { type: "string" },
      other: { type: "string" },
      simpleMap: { type: "object", additionalProperties: { type: "string" } },
    },
  },
} as Record<string, SchemaNode>);
export const T = typeOf(abstractSchemas, ITEM);

export function smp(doc: Json, patch: unknown): Json {
  return apply(doc, patch, T);
}

export const items = (...names: string[]) => names.map((name) => ({ name }));
