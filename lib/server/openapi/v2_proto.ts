/**
 * The protobuf form of `/openapi/v2`: a Swagger 2.0 JSON document turned into gnostic's
 * `openapi.v2.Document` message (`testdata/openapiv2/OpenAPIv2.proto`), which kubectl up to 1.28
 * asks for (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).
 *
 * Kubernetes builds this message by parsing its JSON document with gnostic's compiler; this
 * module does the same mapping, generically, from whatever the JSON holds:
 * - a JSON key is the lowerCamel spelling of its proto field (`operation_id` -> `operationId`),
 *   `_ref` is `$ref`;
 * - keys starting with `x-` go to the message's `vendor_extension` list as `NamedAny`;
 * - maps with free keys (definitions, properties, responses, …) are lists of `Named…` pairs in
 *   the JSON's key order;
 * - the oneof wrappers pick their member from the JSON (`in: body`, a `$ref`, `type: file`, …);
 * - `Any` values (vendor extensions, `default`, `example`, `enum` items) carry the value as YAML
 *   text in block style, as gnostic writes them;
 * - scalars equal to their proto3 zero value (`""`, `0`, `false`) are left out, as Go's
 *   encoder does: proto3 cannot tell them from absent.
 *
 * Keys the message has no field for (Swagger 2.0 lacks a few JSON Schema keywords custom
 * resource schemas may use) are dropped and reported to `onDropped`; gnostic would reject the
 * whole document instead.
 */

import protobuf from "protobufjs";
import { stringify } from "yaml";
import descriptor from "./v2_descriptor.json" with { type: "json" };

/** The media type of the protobuf form, as kube answers with it. */
export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/** The spelling kubectl asks for (kube accepts both). */
export const OPENAPI_V2_PROTOBUF_AT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
root.resolveAll();
const pkg = "openapi.v2";
const documentType = root.lookupType(`${pkg}.Document`);

type Json = unknown;
type Obj = Record<string, unknown>;
type Out = Record<string, unknown>;

export interface ConvertOptions {
  /** Called with the JSON path of every key the message has no field for. */
  onDropped?: (path: string) => void;
}

function isObject(v: Json): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** The JSON key of a proto field: `base_path` -> `basePath`, `_ref` -> `$ref`. */
function jsonKey(field: string): string {
  if (field === "_ref") return "$ref";
  return field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Per message type: JSON key -> field. */
const keyIndex = new Map<protobuf.Type, Map<string, protobuf.Field>>();
function fieldsByKey(type: protobuf.Type): Map<string, protobuf.Field> {
  let index = keyIndex.get(type);
  if (!index) {
    index = new Map(type.fieldsArray.map((f) => [jsonKey(f.name), f]));
    keyIndex.set(type, index);
  }
  return index;
}

class Converter {
  readonly #onDropped: (path: string) => void;
  /** YAML texts by the value's JSON: most `Any` values repeat (`""`, `{}`, list types). */
  readonly #yaml = new Map<string, string>();

  constructor(opts: ConvertOptions) {
    this.#onDropped = opts.onDropped ?? (() => {});
  }

  drop(path: string): undefined {
    this.#onDropped(path);
    return undefined;
  }

  /** gnostic's `Any`: the value as YAML in block style (yaml.v3 with styles cleared). YAML
   * 1.1 quoting, since kube-openapi reads these with a YAML 1.1 parser (yaml.v2): `yes`,
   * `on` or `0777` as strings must be quoted, as yaml.v3 does. */
  any(value: Json): Out {
    const key = JSON.stringify(value);
    let yaml = this.#yaml.get(key);
    if (yaml === undefined) {
      yaml = stringify(value, { version: "1.1", indent: 4, lineWidth: 0, minContentWidth: 0 });
      this.#yaml.set(key, yaml);
    }
    return { yaml };
  }

  namedAny(name: string, value: Json): Out {
    return { name, value: this.any(value) };
  }

  /** A value for `field`, or undefined when it is the zero value or cannot be one. */
  value(field: protobuf.Field, v: Json, path: string): unknown {
    switch (field.type) {
      case "string":
        return typeof v === "string" ? (v === "" ? undefined : v) : this.drop(path);
      case "bool":
        return typeof v === "boolean" ? (v ? true : undefined) : this.drop(path);
      case "double":
        return typeof v === "number" ? (v === 0 ? undefined : v) : this.drop(path);
      case "int64":
        return Number.isSafeInteger(v) ? (v === 0 ? undefined : v) : this.drop(path);
    }
    return this.message(field.resolvedType as protobuf.Type, v, path);
  }

  /** The fields of `type` from a JSON object: the generic mapping (see the module comment). */
  fields(type: protobuf.Type, v: Json, path: string, skip?: (key: string) => boolean): Out {
    const out: Out = {};
    if (!isObject(v)) return this.drop(path) ?? out;
    const byKey = fieldsByKey(type);
    const vendor = type.fields.vendor_extension;
    for (const [key, item] of Object.entries(v)) {
      if (skip?.(key)) continue;
      const at = `${path}/${key}`;
      if (vendor && key.startsWith("x-")) {
        ((out.vendor_extension ??= []) as Out[]).push(this.namedAny(key, item));
        continue;
      }
      const field = byKey.get(key);
      if (!field || field.name === "vendor_extension") {
        this.drop(at);
        continue;
      }
      if (field.repeated) {
        if (!Array.isArray(item)) {
          this.drop(at);
          continue;
        }
        // A scalar that converted to nothing (its zero value) keeps its place; a message that
        // could not be made is left out.
        const list = item.map((x, i) => this.value(field, x, `${at}/${i}`) ?? zeroOf(field))
          .filter((x) => x !== undefined);
        if (list.length) out[field.name] = list;
        continue;
      }
      const converted = this.value(field, item, at);
      if (converted !== undefined) out[field.name] = converted;
    }
    return out;
  }

  /** A message of `type` from its JSON form. */
  message(type: protobuf.Type, v: Json, path: string): Out | undefined {
    const special = SPECIAL[type.name];
    if (special) return special(this, v, path);
    const named = namedMapField(type);
    if (named) return this.namedMap(named, v, path);
    return this.fields(type, v, path);
  }

  /** `{additional_properties: [{name, value}…]}` from a JSON object with free keys. */
  namedMap(field: protobuf.Field, v: Json, path: string): Out | undefined {
    if (!isObject(v)) return this.drop(path);
    const valueField = (field.resolvedType as protobuf.Type).fields.value;
    const pairs: Out[] = [];
    for (const [name, item] of Object.entries(v)) {
      if (valueField.type !== "string") {
        const value = this.message(
          valueField.resolvedType as protobuf.Type,
          item,
          `${path}/${name}`,
        );
        if (value !== undefined) pairs.push({ name, value });
      } else if (typeof item !== "string") {
        this.drop(`${path}/${name}`);
      } else {
        pairs.push(item === "" ? { name } : { name, value: item });
      }
    }
    return pairs.length ? { [field.name]: pairs } : {};
  }

  /** One member of a oneof wrapper, holding the message of `member` made from `v`. */
  oneof(wrapper: string, member: string, v: Json, path: string): Out | undefined {
    const field = type(wrapper).fields[member];
    const value = this.message(field.resolvedType as protobuf.Type, v, path);
    return value === undefined ? undefined : { [member]: value };
  }
}

/** The zero value of a scalar field; undefined for messages. */
function zeroOf(field: protobuf.Field): unknown {
  switch (field.type) {
    case "string":
      return "";
    case "bool":
      return false;
    case "double":
    case "int64":
      return 0;
  }
  return undefined;
}

function type(name: string): protobuf.Type {
  return root.lookupType(`${pkg}.${name}`);
}

/** The field of a message that is only a map with free keys (`Definitions`, `Properties`, …). */
function namedMapField(t: protobuf.Type): protobuf.Field | undefined {
  const fields = t.fieldsArray;
  if (fields.length !== 1 || fields[0].name !== "additional_properties") return undefined;
  return fields[0].repeated && fields[0].type.startsWith("Named") ? fields[0] : undefined;
}

const NON_BODY: Record<string, string> = {
  header: "header_parameter_sub_schema",
  formData: "form_data_parameter_sub_schema",
  query: "query_parameter_sub_schema",
  path: "path_parameter_sub_schema",
};

const OAUTH2_FLOWS: Record<string, string> = {
  implicit: "oauth2_implicit_security",
  password: "oauth2_password_security",
  application: "oauth2_application_security",
  accessCode: "oauth2_access_code_security",
};

type Special = (c: Converter, v: Json, path: string) => Out | undefined;

/** Messages whose JSON form is not an object of their fields, and the oneof wrappers. */
const SPECIAL: Record<string, Special> = {
  Any: (c, v) => c.any(v),
  StringArray(c, v, path) {
    if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) return c.drop(path);
    return v.length ? { value: v } : {};
  },
  TypeItem(c, v, path) {
    if (typeof v === "string") return { value: [v] };
    return SPECIAL.StringArray(c, v, path);
  },
  ItemsItem(c, v, path) {
    const schema = type("Schema");
    const list = Array.isArray(v) ? v : [v];
    return { schema: list.map((s, i) => c.message(schema, s, `${path}/${i}`) ?? {}) };
  },
  AdditionalPropertiesItem(c, v, path) {
    if (typeof v === "boolean") return { boolean: v };
    return c.oneof("AdditionalPropertiesItem", "schema", v, path);
  },
  Paths(c, v, path) {
    const out: Out = {};
    if (!isObject(v)) return c.drop(path);
    const item = type("PathItem");
    for (const [key, value] of Object.entries(v)) {
      if (key.startsWith("x-")) {
        ((out.vendor_extension ??= []) as Out[]).push(c.namedAny(key, value));
      } else if (key.startsWith("/")) {
        const converted = c.message(item, value, `${path}/${key}`);
        if (converted) ((out.path ??= []) as Out[]).push({ name: key, value: converted });
      } else {
        c.drop(`${path}/${key}`);
      }
    }
    return out;
  },
  Responses(c, v, path) {
    const out: Out = {};
    if (!isObject(v)) return c.drop(path);
    const value = type("ResponseValue");
    for (const [key, item] of Object.entries(v)) {
      if (key.startsWith("x-")) {
        ((out.vendor_extension ??= []) as Out[]).push(c.namedAny(key, item));
      } else {
        const converted = c.message(value, item, `${path}/${key}`);
        if (converted) ((out.response_code ??= []) as Out[]).push({ name: key, value: converted });
      }
    }
    return out;
  },
  ParametersItem(c, v, path) {
    if (isObject(v) && "$ref" in v) return c.oneof("ParametersItem", "json_reference", v, path);
    return c.oneof("ParametersItem", "parameter", v, path);
  },
  Parameter(c, v, path) {
    if (isObject(v) && v.in === "body") return c.oneof("Parameter", "body_parameter", v, path);
    return c.oneof("Parameter", "non_body_parameter", v, path);
  },
  NonBodyParameter(c, v, path) {
    const member = isObject(v) && typeof v.in === "string" ? NON_BODY[v.in] : undefined;
    if (!member) return c.drop(`${path}/in`);
    return c.oneof("NonBodyParameter", member, v, path);
  },
  ResponseValue(c, v, path) {
    if (isObject(v) && "$ref" in v) return c.oneof("ResponseValue", "json_reference", v, path);
    return c.oneof("ResponseValue", "response", v, path);
  },
  SchemaItem(c, v, path) {
    if (isObject(v) && v.type === "file") return c.oneof("SchemaItem", "file_schema", v, path);
    return c.oneof("SchemaItem", "schema", v, path);
  },
  SecurityDefinitionsItem(c, v, path) {
    const t = isObject(v) ? v.type : undefined;
    const member = t === "basic"
      ? "basic_authentication_security"
      : t === "apiKey"
      ? "api_key_security"
      : t === "oauth2" && isObject(v) && typeof v.flow === "string"
      ? OAUTH2_FLOWS[v.flow]
      : undefined;
    if (!member) return c.drop(`${path}/type`);
    return c.oneof("SecurityDefinitionsItem", member, v, path);
  },
};

/** The `openapi.v2.Document` message of a Swagger 2.0 document, as a plain object whose keys
 * are the .proto's field names (what protobufjs encodes). */
export function swaggerToGnostic(doc: Json, opts: ConvertOptions = {}): Out {
  return new Converter(opts).message(documentType, doc, "") ?? {};
}

/** The protobuf bytes of a Swagger 2.0 document (JSON text or parsed). */
export function encodeOpenAPIv2(doc: Json | string, opts: ConvertOptions = {}): Uint8Array {
  const parsed = typeof doc === "string" ? JSON.parse(doc) : doc;
  return documentType.encode(swaggerToGnostic(parsed, opts)).finish();
}
