/**
 * Reading the protobuf form of `/openapi/v2` back, for tests: gnostic's `openapi.v2.Document`
 * decoded with the checked-in .proto and turned back into Swagger 2.0 JSON, the way
 * kube-openapi reads it. Written independently of the server's encoder.
 */

import assert from "node:assert/strict";
import type protobuf from "protobufjs";
import { load as loadYaml } from "js-yaml";
import { parseOpenAPIv2 } from "../tools/extract_openapiv2.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

// The decoder side is built from the checked-in .proto itself, not from the descriptor the
// encoder embeds, so a wrong descriptor shows up here.
const PROTO_PATH = new URL("../testdata/openapiv2/OpenAPIv2.proto", import.meta.url);
export const protoText = Deno.readTextFileSync(PROTO_PATH);
export const OpenAPIv2Document = parseOpenAPIv2(protoText).lookupType("openapi.v2.Document");

function jsonKey(field: string): string {
  if (field === "_ref") return "$ref";
  return field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** gnostic message (protobufjs plain object) -> Swagger JSON. */
function toJson(type: protobuf.Type, m: Json): Json {
  const t = (name: string) => type.fields[name].resolvedType as protobuf.Type;
  switch (type.name) {
    case "Any":
      return loadYaml(m.yaml);
    case "StringArray":
    case "TypeItem":
      return type.name === "TypeItem" && m.value?.length === 1 ? m.value[0] : (m.value ?? []);
    case "ItemsItem": {
      const list = (m.schema ?? []).map((s: Json) => toJson(t("schema"), s));
      return list.length === 1 ? list[0] : list;
    }
    case "AdditionalPropertiesItem":
      return "boolean" in m ? m.boolean : toJson(t("schema"), m.schema);
    case "Paths":
    case "Responses": {
      const out: Json = {};
      const field = type.name === "Paths" ? "path" : "response_code";
      for (const p of m[field] ?? []) {
        out[p.name] = toJson((t(field).fields.value.resolvedType) as protobuf.Type, p.value ?? {});
      }
      for (const x of m.vendor_extension ?? []) out[x.name] = loadYaml(x.value.yaml);
      return out;
    }
  }
  if (type.oneofsArray.length === 1 && type.fieldsArray.every((f) => f.partOf)) {
    const [member] = Object.keys(m);
    assert.equal(Object.keys(m).length, 1, `${type.name} must hold exactly one member`);
    return toJson(t(member), m[member]);
  }
  const fields = type.fieldsArray;
  if (fields.length === 1 && fields[0].name === "additional_properties") {
    const out: Json = {};
    const value = (fields[0].resolvedType as protobuf.Type).fields.value;
    for (const p of m.additional_properties ?? []) {
      out[p.name] = value.resolvedType
        ? toJson(value.resolvedType as protobuf.Type, p.value ?? {})
        : (p.value ?? "");
    }
    return out;
  }
  const out: Json = {};
  for (const f of fields) {
    if (!(f.name in m)) continue;
    if (f.name === "vendor_extension") {
      for (const x of m[f.name]) out[x.name] = loadYaml(x.value.yaml);
      continue;
    }
    const convert = (v: Json) => f.resolvedType ? toJson(f.resolvedType as protobuf.Type, v) : v;
    out[jsonKey(f.name)] = f.repeated ? m[f.name].map(convert) : convert(m[f.name]);
  }
  return out;
}

export function decodeOpenAPIv2(bytes: Uint8Array): Json {
  const message = OpenAPIv2Document.toObject(OpenAPIv2Document.decode(bytes), {
    longs: Number,
    defaults: false,
    arrays: false,
  });
  return toJson(OpenAPIv2Document, message);
}
