import assert from "node:assert/strict";
import { validateStructuralSchema } from "./structural.ts";
import { fieldErrorMessage } from "../api/errors.ts";

const P = "s";

function errors(schema: unknown): string[] {
  return validateStructuralSchema(schema, P).map(fieldErrorMessage);
}

Deno.test("structural: a well-formed schema passes", () => {
  assert.deepEqual(
    errors({
      type: "object",
      properties: {
        metadata: { type: "object", properties: { name: { type: "string", maxLength: 10 } } },
        spec: {
          type: "object",
          properties: {
            port: {
              "x-kubernetes-int-or-string": true,
              anyOf: [{ type: "integer" }, { type: "string" }],
            },
            free: { "x-kubernetes-preserve-unknown-fields": true },
            tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
            byName: {
              type: "array",
              "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["name"],
              items: {
                type: "object",
                required: ["name"],
                properties: { name: { type: "string" } },
              },
            },
            labels: { type: "object", additionalProperties: { type: "string" } },
            either: {
              type: "object",
              properties: { a: { type: "string" }, b: { type: "string" } },
              oneOf: [{ required: ["a"] }, { required: ["b"] }],
            },
          },
        },
      },
    }),
    [],
  );
});

Deno.test("structural: missing and misplaced types", () => {
  assert.deepEqual(errors(undefined), ["s: Required value: schemas are required"]);
  assert.deepEqual(errors({ properties: {} }), [
    "s.type: Required value: must not be empty at the root",
  ]);
  assert.deepEqual(errors({ type: "object", properties: { a: {} } }), [
    "s.properties[a].type: Required value: must not be empty for specified object fields",
  ]);
  assert.deepEqual(errors({ type: "object", properties: { a: { type: "array" } } }), [
    "s.properties[a].items: Required value: must be specified",
  ]);
  assert.deepEqual(
    errors({ type: "object", properties: { a: { type: "array", items: {} } } }),
    ["s.properties[a].items.type: Required value: must not be empty for specified array items"],
  );
  assert.deepEqual(errors({ type: "object", properties: { a: { type: "date" } } }), [
    's.properties[a].type: Unsupported value: "date": supported values: "array", "boolean", "integer", "number", "object", "string"',
  ]);
  assert.deepEqual(
    errors({ type: "object", anyOf: [{ type: "object" }] }),
    ["s.anyOf[0].type: Forbidden: must be empty to be structural"],
  );
});

Deno.test("structural: markers and forbidden keywords", () => {
  assert.deepEqual(
    errors({
      type: "object",
      properties: {
        a: { type: "string", "x-kubernetes-list-type": "set" },
        b: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "map" },
        c: { type: "object", "x-kubernetes-preserve-unknown-fields": false },
        d: {
          type: "object",
          properties: { x: { type: "string" } },
          additionalProperties: { type: "string" },
        },
        e: { type: "array", items: { type: "string" }, uniqueItems: true },
        f: { $ref: "#/definitions/x", type: "object" },
        h: { type: "object", "x-kubernetes-embedded-resource": true },
      },
    }),
    [
      's.properties[a].x-kubernetes-list-type: Invalid value: "set": must only be used with type array',
      "s.properties[b].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
      "s.properties[c].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
      "s.properties[d].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
      "s.properties[e].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
      "s.properties[f].$ref: Forbidden: $ref is not supported",
      "s.properties[h].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
    ],
  );
  assert.deepEqual(
    errors({
      type: "object",
      properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } },
    }),
    [
      "s.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
    ],
  );
});
