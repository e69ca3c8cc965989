/**
 * From a CustomResourceDefinition version's `openAPIV3Schema` to a named schema of a
 * {@link SchemaSet}, so custom resources go through the same validation, pruning, typed view
 * (patch, apply) and OpenAPI publication as built-in kinds.
 *
 * The schema as written describes only what the author declares. The server adds what every
 * object has, as Kubernetes does when it publishes custom resource schemas: `apiVersion` and
 * `kind` strings and an ObjectMeta `metadata`, at the root and in every
 * `x-kubernetes-embedded-resource` node. Unknown fields of `metadata` are thus pruned like
 * those of built-in kinds.
 */

import { REF_PREFIX, type SchemaNode, SchemaSet } from "../schema/mod.ts";

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

const API_VERSION: SchemaNode = {
  description:
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.",
  type: "string",
};
const KIND: SchemaNode = {
  description:
    "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.",
  type: "string",
};
const METADATA: SchemaNode = {
  description: "Standard object's metadata.",
  allOf: [{ $ref: `${REF_PREFIX}${OBJECT_META}` }],
  default: {},
};

/**
 * The schema name of a custom resource kind, as Kubernetes names it in OpenAPI: the group's
 * labels reversed, the version, the kind (`ssa.example.com`, `v1`, `Widget` ->
 * `com.example.ssa.v1.Widget`). A name that a built-in schema already uses gets a `crd.`
 * prefix, so a custom kind can never shadow a built-in type.
 */
export function customResourceSchemaName(group: string, version: string, kind: string): string {
  const name = [...group.split(".").reverse(), version, kind].join(".");
  const builtin = SchemaSet.builtin();
  return builtin.has(name) || builtin.has(`${name}List`) ? `crd.${name}` : name;
}

/**
 * The schema the server validates, prunes and publishes a custom resource with: a deep copy
 * of `openAPIV3Schema` with `apiVersion`, `kind` and `metadata` added at the root and in
 * embedded resources. `metadata` always refers to ObjectMeta (a CRD may only restrict
 * `name` and `generateName`, which this first version does not enforce).
 */
export function customResourceSchema(openAPIV3Schema: SchemaNode): SchemaNode {
  const root = structuredClone(openAPIV3Schema);
  withObjectFields(root);
  walk(root);
  return root;
}

function withObjectFields(node: SchemaNode): void {
  node.type ??= "object";
  const props = { ...(node.properties ?? {}) };
  props.apiVersion ??= API_VERSION;
  props.kind ??= KIND;
  props.metadata = METADATA;
  node.properties = props;
}

function walk(node: SchemaNode): void {
  for (const sub of Object.values(node.properties ?? {})) visit(sub);
  if (node.items && typeof node.items === "object" && !Array.isArray(node.items)) visit(node.items);
  const extra = node.additionalProperties;
  if (extra && typeof extra === "object") visit(extra);
}

function visit(node: SchemaNode): void {
  if (!node || typeof node !== "object") return;
  if (node["x-kubernetes-embedded-resource"] === true) withObjectFields(node);
  walk(node);
}

/** The built-in schemas plus `extra` (e.g. one custom resource's schema). */
export function schemasWith(extra: Record<string, SchemaNode>): SchemaSet {
  return SchemaSet.builtin().extend(extra);
}
