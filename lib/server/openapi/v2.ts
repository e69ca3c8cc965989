/**
 * The Swagger 2.0 rendering (`/openapi/v2`): one document for all group-versions, their
 * operations merged (the first of each method and path kept) and the definitions rewritten
 * for Swagger 2.0 (`#/definitions/` references, no v3-only keywords).
 */

import { REF_PREFIX, type SchemaNode, type SchemaSet } from "../../schema/mod.ts";
import { type GVK, GVK_KEY } from "./names.ts";
import { type DocSpec, OBJECT_MEDIA, type Operation } from "./model.ts";
import type { Param } from "./parameters.ts";
import { presentSchema } from "./present.ts";
import { byPath, INFO, type Json, referencedSchemas, SECURITY_SCHEME } from "./render_shared.ts";

function v2Ref(name: string): Json {
  return { $ref: `#/definitions/${name}` };
}

/** OpenAPI v3 keywords Swagger 2.0 lacks (custom resource schemas use them): dropped from
 * the v2 document, as Kubernetes does, so v2 clients can parse it. */
const V3_ONLY = new Set(["nullable", "anyOf", "oneOf", "not"]);

/** A schema node rewritten for Swagger 2.0: references into `#/definitions/`, and
 * `allOf: [{$ref}]` wrappers turned back into a plain `$ref` (with its description). */
function v2Schema(node: unknown): Json {
  if (Array.isArray(node)) return node.map(v2Schema);
  if (node === null || typeof node !== "object") return node;
  const n = node as SchemaNode;
  if (Array.isArray(n.allOf) && n.allOf.length === 1 && typeof n.allOf[0].$ref === "string") {
    const { allOf, default: _d, ...rest } = n;
    return { ...v2Schema(rest), $ref: v2Schema(allOf[0]).$ref };
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith(REF_PREFIX)) {
      out.$ref = `#/definitions/${v.slice(REF_PREFIX.length)}`;
    } else if (
      k === "description" || k === GVK_KEY || k === "enum" || k === "default" ||
      k === "example"
    ) {
      out[k] = v;
    } else if (V3_ONLY.has(k)) {
      continue;
    } else if (k === "properties" && v && typeof v === "object" && !Array.isArray(v)) {
      // Property names are names, not keywords: keep every one.
      const props: Json = {};
      for (const [name, sub] of Object.entries(v)) props[name] = v2Schema(sub);
      out[k] = props;
    } else {
      out[k] = v2Schema(v);
    }
  }
  return out;
}

function v2Param(p: Param): Json {
  const out: Json = { description: p.description, in: p.in, name: p.name };
  if (p.in === "path") out.required = true;
  out.type = p.type;
  out.uniqueItems = true;
  return out;
}

function v2Operation(o: Operation): Json {
  const out: Json = {};
  if (o.body) out.consumes = o.body.media;
  out.description = o.description;
  out.operationId = o.operationId;
  const params = o.params.map(v2Param);
  if (o.body) {
    const body: Json = { in: "body", name: "body", schema: v2Ref(o.body.schema) };
    if (o.body.required) body.required = true;
    params.unshift(body);
  }
  if (params.length) out.parameters = params;
  out.produces = o.responses["200"]?.media ?? OBJECT_MEDIA;
  out.responses = {};
  for (const [code, r] of Object.entries(o.responses)) {
    out.responses[code] = r.schema
      ? { description: r.description, schema: v2Ref(r.schema) }
      : { description: r.description };
  }
  out.schemes = ["https"];
  out.tags = [o.tag];
  if (o.action) out["x-kubernetes-action"] = o.action;
  if (o.gvk) out[GVK_KEY] = { group: o.gvk.group, kind: o.gvk.kind, version: o.gvk.version };
  return out;
}

function v2Paths(ops: Operation[]): Json {
  const paths: Json = {};
  for (const [path, { shared, ops: list }] of byPath(ops)) {
    const item: Json = {};
    const entries: [string, Json][] = list.map((o) => [o.method, v2Operation(o)]);
    if (shared.length) entries.push(["parameters", shared.map(v2Param)]);
    entries.sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [k, v] of entries) item[k] = v;
    paths[path] = item;
  }
  return paths;
}

/** The Swagger 2.0 document of all of `specs` (in order: the first operation of a method and
 * path wins), its definitions taken from `schemas`. */
export function v2Document(specs: Iterable<DocSpec>, schemas: SchemaSet): Json {
  const ops: Operation[] = [];
  const ensure = new Map<string, GVK[]>();
  const keep = new Set<string>(["v1"]);
  for (const spec of specs) {
    ops.push(...spec.ops);
    for (const gv of spec.keepGVs) keep.add(gv);
    for (const [name, list] of spec.ensure) {
      ensure.set(name, [...(ensure.get(name) ?? []), ...list]);
    }
  }
  const seen = new Set<string>();
  const unique = ops.filter((o) => {
    const k = `${o.method} ${o.path}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const paths = v2Paths(unique);
  const definitions: Json = {};
  for (const name of schemas.closure(referencedSchemas(unique))) {
    const node = presentSchema(schemas.get(name)!, keep, ensure.get(name) ?? []);
    definitions[name] = v2Schema(node);
  }
  return {
    definitions,
    info: INFO,
    paths,
    security: [{ BearerToken: [] }],
    securityDefinitions: SECURITY_SCHEME,
    swagger: "2.0",
  };
}
