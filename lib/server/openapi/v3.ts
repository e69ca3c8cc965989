/**
 * The OpenAPI 3.0 rendering of a document (`/openapi/v3/<path>`): paths with their operations
 * and shared parameters, and `components.schemas` with the closure of the schemas they use,
 * as {@link presentSchema} shows them.
 */

import type { SchemaSet } from "../../schema/mod.ts";
import { GVK_KEY, ref } from "./names.ts";
import { type DocSpec, OBJECT_MEDIA, type Operation } from "./model.ts";
import type { Param } from "./parameters.ts";
import { presentSchema } from "./present.ts";
import { byPath, INFO, type Json, referencedSchemas, SECURITY_SCHEME } from "./render_shared.ts";

function v3Param(p: Param): Json {
  const out: Json = { description: p.description, in: p.in, name: p.name };
  if (p.in === "path") out.required = true;
  out.schema = { type: p.type, uniqueItems: true };
  return out;
}

function v3Content(schema: string, media: string[]): Json {
  const content: Json = {};
  for (const m of media) content[m] = { schema: ref(schema) };
  return content;
}

function v3Operation(o: Operation): Json {
  const out: Json = { description: o.description, operationId: o.operationId };
  if (o.params.length) out.parameters = o.params.map(v3Param);
  if (o.body) {
    out.requestBody = { content: v3Content(o.body.schema, o.body.media) };
    if (o.body.required) out.requestBody.required = true;
  }
  out.responses = {};
  for (const [code, r] of Object.entries(o.responses)) {
    out.responses[code] = r.schema
      ? { content: v3Content(r.schema, r.media ?? OBJECT_MEDIA), description: r.description }
      : { description: r.description };
  }
  out.tags = [o.tag];
  if (o.action) out["x-kubernetes-action"] = o.action;
  if (o.gvk) out[GVK_KEY] = { group: o.gvk.group, kind: o.gvk.kind, version: o.gvk.version };
  return out;
}

function v3Paths(ops: Operation[]): Json {
  const paths: Json = {};
  for (const [path, { shared, ops: list }] of byPath(ops)) {
    const item: Json = {};
    const entries: [string, Json][] = list.map((o) => [o.method, v3Operation(o)]);
    if (shared.length) entries.push(["parameters", shared.map(v3Param)]);
    entries.sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [k, v] of entries) item[k] = v;
    paths[path] = item;
  }
  return paths;
}

/** The OpenAPI 3.0 document of `spec`, its schemas taken from `schemas`. */
export function v3Document(spec: DocSpec, schemas: SchemaSet): Json {
  const components: Json = {};
  for (const name of schemas.closure(referencedSchemas(spec.ops))) {
    components[name] = presentSchema(
      schemas.get(name)!,
      spec.keepGVs,
      spec.ensure.get(name) ?? [],
    );
  }
  return {
    components: { schemas: components, securitySchemes: SECURITY_SCHEME },
    info: INFO,
    openapi: "3.0.0",
    paths: v3Paths(spec.ops),
  };
}
