import { assertEquals } from "../../tests/assert.ts";
import { applyDefaults, defaulter, validateDefaults } from "./defaults.ts";
import { validateCustomResourceDefinition } from "./validation.ts";
import { fieldErrorMessage } from "../api/mod.ts";

const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      default: {},
      properties: {
        replicas: { type: "integer", default: 1 },
        mode: { type: "string", default: "fast", nullable: true },
        size: { type: "string", default: "M" },
        ports: {
          type: "array",
          items: {
            type: "object",
            properties: { protocol: { type: "string", default: "TCP" }, port: { type: "integer" } },
          },
        },
        labels: {
          type: "object",
          additionalProperties: {
            type: "object",
            properties: { weight: { type: "integer", default: 5 } },
          },
        },
      },
    },
  },
};

Deno.test("defaults: missing fields get their default, below defaults too", () => {
  const obj: Record<string, unknown> = { metadata: { name: "a" } };
  applyDefaults(obj, schema);
  // spec is defaulted to {}, then its own properties are defaulted.
  assertEquals(obj.spec, { replicas: 1, mode: "fast", size: "M" });
});

Deno.test("defaults: set values stay; list items and map values are defaulted", () => {
  const obj = {
    spec: {
      replicas: 0,
      size: "L",
      ports: [{ port: 80 }, { port: 53, protocol: "UDP" }],
      labels: { a: {}, b: { weight: 1 } },
    },
  };
  applyDefaults(obj, schema);
  assertEquals(obj.spec, {
    replicas: 0,
    size: "L",
    mode: "fast",
    ports: [{ port: 80, protocol: "TCP" }, { port: 53, protocol: "UDP" }],
    labels: { a: { weight: 5 }, b: { weight: 1 } },
  });
});

Deno.test("defaults: a null is defaulted unless the field is nullable", () => {
  const obj = { spec: { size: null, mode: null } };
  applyDefaults(obj, schema);
  assertEquals(obj.spec.size, "M");
  assertEquals(obj.spec.mode, null);
});

Deno.test("defaults: each object gets its own copy of a default", () => {
  const s = {
    type: "object",
    properties: {
      a: { type: "object", default: { x: 1 }, properties: { x: { type: "integer" } } },
    },
  };
  const one: Record<string, { x: number }> = {};
  const two: Record<string, { x: number }> = {};
  applyDefaults(one, s);
  applyDefaults(two, s);
  one.a.x = 2;
  assertEquals(two.a.x, 1);
  assertEquals(s.properties.a.default, { x: 1 });
});

Deno.test("defaults: no defaulter for a schema without defaults", () => {
  assertEquals(defaulter({ type: "object", properties: { a: { type: "string" } } }), undefined);
  assertEquals(typeof defaulter(schema), "function");
});

const AT = "spec.versions[0].schema.openAPIV3Schema";

function messages(s: unknown): string[] {
  return validateDefaults(s, AT).map(fieldErrorMessage);
}

Deno.test("defaults validation: a default of the wrong type names its field", () => {
  const s = {
    type: "object",
    properties: {
      spec: { type: "object", properties: { replicas: { type: "integer", default: "one" } } },
    },
  };
  assertEquals(messages(s), [
    `${AT}.properties[spec].properties[replicas].default: Invalid value: "string": must be of type integer`,
  ]);
});

Deno.test("defaults validation: value validations, unknown fields and enums", () => {
  const s = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          replicas: { type: "integer", minimum: 0, default: -1 },
          mode: { type: "string", enum: ["a", "b"], default: "c" },
          sub: {
            type: "object",
            properties: { known: { type: "string" } },
            default: { known: "x", unknown: 1 },
          },
          ok: { type: "object", properties: { n: { type: "integer" } }, default: { n: 3 } },
          free: { type: "object", "x-kubernetes-preserve-unknown-fields": true, default: { a: 1 } },
        },
      },
    },
  };
  const got = messages(s);
  const p = `${AT}.properties[spec].properties`;
  assertEquals(got, [
    `${p}[replicas].default: Invalid value: -1: ${p}[replicas].default in body should be greater than or equal to 0`,
    `${p}[mode].default: Unsupported value: "c": supported values: "a", "b"`,
    `${p}[sub].default: Invalid value: {"known":"x","unknown":1}: must not have unknown fields`,
  ]);
});

Deno.test("defaults validation: where a default may not be", () => {
  const s = {
    type: "object",
    properties: {
      apiVersion: { type: "string", default: "x/v1" },
      spec: {
        type: "object",
        properties: { a: { type: "string" } },
        anyOf: [{ properties: { a: { default: "x" } } }],
      },
    },
  };
  assertEquals(messages(s), [
    `${AT}.properties[apiVersion].default: Forbidden: must not be set in top-level apiVersion`,
    `${AT}.properties[spec].anyOf[0].properties[a].default: Forbidden: must be undefined to be structural`,
  ]);
});

Deno.test("defaults validation: a CRD with a bad default is refused, a good one accepted", () => {
  const crd = (replicas: unknown) => ({
    metadata: { name: "widgets.example.com" },
    spec: {
      group: "example.com",
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: { spec: { type: "object", properties: { replicas } } },
          },
        },
      }],
    },
  });
  assertEquals(validateCustomResourceDefinition(crd({ type: "integer", default: 2 })), []);
  assertEquals(
    validateCustomResourceDefinition(crd({ type: "integer", default: true })).map((e) => e.field),
    [`${AT}.properties[spec].properties[replicas].default`],
  );
});

Deno.test("defaults validation: list-map keys must be required or defaulted", () => {
  const list = (items: unknown) => ({
    type: "object",
    properties: {
      ports: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        items,
      },
    },
  });
  const props = { port: { type: "integer" }, protocol: { type: "string" } };
  assertEquals(messages(list({ type: "object", properties: props })), [
    `${AT}.properties[ports].items.properties[port].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
    `${AT}.properties[ports].items.properties[protocol].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
  ]);
  assertEquals(
    messages(list({
      type: "object",
      required: ["port"],
      properties: { ...props, protocol: { type: "string", default: "TCP" } },
    })),
    [],
  );
});
