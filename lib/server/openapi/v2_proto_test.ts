import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { builtinDefinitions } from "../../resources/mod.ts";
import { SchemaSet } from "../../schema/schema_set.ts";
import { OpenAPIService } from "./service.ts";
import { encodeOpenAPIv2 } from "./v2_proto.ts";
import { descriptorText } from "../../../tools/extract_openapiv2.ts";
import {
  decodeOpenAPIv2,
  OpenAPIv2Document as Document,
  protoText,
} from "../../../tests/gnostic.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function roundTrip(doc: Json): { back: Json; dropped: string[] } {
  const dropped: string[] = [];
  const bytes = encodeOpenAPIv2(doc, { onDropped: (p) => dropped.push(p) });
  return { back: decodeOpenAPIv2(bytes), dropped };
}

Deno.test("openapi v2 protobuf: the embedded descriptor is what the checked-in .proto gives", async () => {
  const committed = await Deno.readTextFile(
    new URL("./v2_descriptor.json", import.meta.url),
  );
  assert.equal(committed, descriptorText(protoText));
});

Deno.test("openapi v2 protobuf: the built-in document round-trips, every path and definition", () => {
  const json = JSON.parse(new OpenAPIService(builtinDefinitions(), SchemaSet.builtin()).v2());
  const { back, dropped } = roundTrip(json);
  assert.deepEqual(dropped, []);
  assert.deepStrictEqual(Object.keys(back.paths), Object.keys(json.paths));
  assert.deepStrictEqual(Object.keys(back.definitions), Object.keys(json.definitions));
  assert.ok(Object.keys(json.paths).length > 50, "the document has the server's paths");
  for (const path of Object.keys(json.paths)) {
    assert.deepStrictEqual(back.paths[path], json.paths[path], path);
  }
  for (const name of Object.keys(json.definitions)) {
    assert.deepStrictEqual(back.definitions[name], json.definitions[name], name);
  }
  assert.deepStrictEqual(back, json);
});

const TRICKY = ["yes", "on", "No", "0777", "0x1F", "1e3", "2001-12-14", "~", "null", ""];

Deno.test("openapi v2 protobuf: vendor extensions are NamedAny with block YAML, as gnostic writes", () => {
  const json = {
    swagger: "2.0",
    info: { title: "t", version: "v" },
    paths: {},
    definitions: {
      "io.k8s.api.core.v1.ConfigMap": {
        type: "object",
        "x-kubernetes-group-version-kind": [{ group: "", kind: "ConfigMap", version: "v1" }],
        properties: {
          data: { type: "object", additionalProperties: { type: "string" } },
          tricky: { type: "string", enum: TRICKY },
        },
      },
    },
  };
  const message: Json = Document.toObject(Document.decode(encodeOpenAPIv2(json)), {
    longs: Number,
  });
  const def = message.definitions.additional_properties[0];
  assert.equal(def.name, "io.k8s.api.core.v1.ConfigMap");
  assert.deepStrictEqual(def.value.type.value, ["object"]);
  assert.deepStrictEqual(def.value.vendor_extension, [{
    name: "x-kubernetes-group-version-kind",
    value: { yaml: '- group: ""\n  kind: ConfigMap\n  version: v1\n' },
  }]);
  // Strings a YAML 1.1 reader (kube-openapi's yaml.v2) would take for booleans, numbers or
  // times stay strings.
  const tricky = def.value.properties.additional_properties[1];
  assert.equal(tricky.name, "tricky");
  const yaml = tricky.value.enum.map((a: Json) => a.yaml);
  assert.deepStrictEqual(yaml.map((y: string) => parseYaml(y, { version: "1.1" })), TRICKY);
  const data = def.value.properties.additional_properties[0];
  assert.equal(data.name, "data");
  assert.deepStrictEqual(data.value.additional_properties.schema.type.value, ["string"]);
});

/** A document using every shape the message has: each oneof member, each free-key map. */
const EVERY_SHAPE: Json = {
  swagger: "2.0",
  info: {
    title: "Every shape",
    version: "1.2.3",
    description: "d",
    termsOfService: "https://example.com/tos",
    contact: { name: "c", url: "https://example.com", email: "c@example.com", "x-c": 1 },
    license: { name: "Apache-2.0", url: "https://example.com/l" },
    "x-info": { nested: [1, "two", true, null] },
  },
  host: "example.com",
  basePath: "/base",
  schemes: ["https", "http"],
  consumes: ["application/json"],
  produces: ["application/json", "application/yaml"],
  paths: {
    "x-paths": "yes",
    "/things/{name}": {
      parameters: [
        { name: "name", in: "path", required: true, type: "string", uniqueItems: true },
        { $ref: "#/parameters/pretty" },
      ],
      get: {
        tags: ["things"],
        summary: "s",
        description: "get a thing",
        operationId: "getThing",
        externalDocs: { description: "more", url: "https://example.com/more" },
        produces: ["application/json"],
        parameters: [
          {
            name: "X-Trace",
            in: "header",
            type: "string",
            description: "a header",
            enum: ["a", "b"],
            default: "a",
          },
          {
            name: "limit",
            in: "query",
            type: "integer",
            format: "int64",
            maximum: 500,
            minimum: 1,
            exclusiveMaximum: true,
            multipleOf: 2,
            allowEmptyValue: true,
            collectionFormat: "csv",
          },
        ],
        responses: {
          "200": {
            description: "OK",
            schema: { $ref: "#/definitions/Thing" },
            headers: { "X-Rate": { type: "integer", format: "int32", description: "rate" } },
            examples: { "application/json": { name: "x" } },
            "x-resp": [1],
          },
          "404": { $ref: "#/responses/NotFound" },
          default: { description: "file", schema: { type: "file", format: "binary" } },
          "x-responses": "ext",
        },
        schemes: ["https"],
        deprecated: true,
        security: [{ oauth: ["read", "write"] }, { basic: [] }],
        "x-kubernetes-action": "get",
      },
      post: {
        consumes: ["multipart/form-data", "application/json"],
        parameters: [
          { name: "body", in: "body", required: true, schema: { $ref: "#/definitions/Thing" } },
          {
            name: "file",
            in: "formData",
            type: "array",
            items: { type: "string", items: { type: "string" }, enum: ["x"] },
            maxItems: 3,
            minItems: 1,
            uniqueItems: true,
          },
        ],
        responses: { "201": { description: "Created" } },
      },
      put: { responses: { "200": { description: "OK" } } },
      delete: { responses: { "200": { description: "OK" } } },
      patch: { responses: { "200": { description: "OK" } } },
      head: { responses: { "200": { description: "OK" } } },
      options: { responses: { "200": { description: "OK" } } },
      "x-item": { a: "b" },
    },
    "/ref": { $ref: "#/paths/~1things~1{name}" },
  },
  definitions: {
    Thing: {
      type: "object",
      title: "Thing",
      description: "a thing",
      required: ["name"],
      discriminator: "kind",
      readOnly: true,
      maxProperties: 10,
      minProperties: 1,
      xml: { name: "thing", namespace: "urn:x", prefix: "t", attribute: true, wrapped: true },
      externalDocs: { url: "https://example.com/thing" },
      example: { name: "example", count: 2.5 },
      properties: {
        name: { type: "string", maxLength: 63, minLength: 1, pattern: "^[a-z]+$", default: "n" },
        count: { type: ["integer", "null"], format: "int32", maximum: 9.5, exclusiveMinimum: true },
        tuple: { type: "array", items: [{ type: "string" }, { type: "integer" }] },
        open: { type: "object", additionalProperties: true },
        closed: { type: "object", additionalProperties: false },
        mapped: { type: "object", additionalProperties: { $ref: "#/definitions/Thing" } },
        mixed: { allOf: [{ $ref: "#/definitions/Thing" }, { type: "object" }] },
        quantity: { "x-kubernetes-int-or-string": true, enum: ["1", 2, "yes", "on", ""] },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        when: { type: "string", format: "date-time", default: "2001-12-14", enum: ["0777"] },
      },
      "x-kubernetes-group-version-kind": [{ group: "g.io", kind: "Thing", version: "v1" }],
      "x-multi-line": "line one\nline two\n",
    },
  },
  parameters: {
    pretty: { name: "pretty", in: "query", type: "string", description: "pretty" },
    thing: { name: "body", in: "body", schema: { type: "object" } },
  },
  responses: { NotFound: { description: "not found", schema: { type: "string" } } },
  security: [{ basic: [] }],
  securityDefinitions: {
    basic: { type: "basic", description: "basic", "x-b": true },
    key: { type: "apiKey", name: "authorization", in: "header" },
    implicit: {
      type: "oauth2",
      flow: "implicit",
      authorizationUrl: "https://example.com/auth",
      scopes: { read: "read things", write: "write things" },
    },
    password: { type: "oauth2", flow: "password", tokenUrl: "https://example.com/token" },
    application: {
      type: "oauth2",
      flow: "application",
      tokenUrl: "https://example.com/token",
      scopes: {},
    },
    accessCode: {
      type: "oauth2",
      flow: "accessCode",
      authorizationUrl: "https://example.com/auth",
      tokenUrl: "https://example.com/token",
    },
  },
  tags: [{ name: "things", description: "things", externalDocs: { url: "https://x" } }],
  externalDocs: { description: "docs", url: "https://example.com/docs" },
  "x-document": { list: [{ a: 1 }, { b: [2, 3] }] },
};

Deno.test("openapi v2 protobuf: every oneof member and free-key map round-trips", () => {
  const { back, dropped } = roundTrip(EVERY_SHAPE);
  assert.deepEqual(dropped, []);
  assert.deepStrictEqual(back, EVERY_SHAPE);
});

Deno.test("openapi v2 protobuf: proto3 zero values are left out, as Go's encoder does", () => {
  const doc = {
    swagger: "2.0",
    info: { title: "t", version: "v", description: "" },
    paths: {},
    definitions: {
      Zero: {
        type: "object",
        properties: { n: { type: "integer", minimum: 0, readOnly: false, default: 0 } },
      },
    },
  };
  const { back } = roundTrip(doc);
  assert.deepStrictEqual(back.info, { title: "t", version: "v" });
  // `default` is an Any (YAML text "0"), not a scalar field: it stays.
  assert.deepStrictEqual(back.definitions.Zero.properties.n, { type: "integer", default: 0 });
});

Deno.test("openapi v2 protobuf: keys Swagger 2.0 has no field for are reported and dropped", () => {
  const doc = {
    swagger: "2.0",
    info: { title: "t", version: "v" },
    paths: { "/a": { get: { responses: { "200": { description: "OK" } } } }, "not-a-path": {} },
    definitions: {
      Crd: {
        type: "object",
        patternProperties: { "^x": { type: "string" } },
        properties: { s: { type: "string", maxLength: "ten" } },
      },
    },
    parameters: { bad: { name: "b", in: "cookie", type: "string" } },
  };
  const { back, dropped } = roundTrip(doc);
  assert.deepEqual(dropped.sort(), [
    "/definitions/Crd/patternProperties",
    "/definitions/Crd/properties/s/maxLength",
    "/parameters/bad/in",
    "/paths/not-a-path",
  ]);
  assert.deepStrictEqual(back.definitions.Crd, {
    type: "object",
    properties: { s: { type: "string" } },
  });
  assert.deepStrictEqual(Object.keys(back.paths), ["/a"]);
  assert.deepStrictEqual(back.parameters, {});
});
