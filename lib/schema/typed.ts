/**
 * The structural view of a schema that patching and server-side apply walk: for each node,
 * is it a scalar, a struct with named fields, a string-keyed map, or a list, and how do
 * merges treat it (list type and keys, map type, patch strategy and merge key).
 *
 * One view serves strategic merge patch (which reads `patchStrategy` / `patchMergeKey`) and
 * server-side apply (which reads `listType` / `listMapKeys` / `mapType`, falling back to the
 * patch markers as Kubernetes does). Where the schema says nothing (an unknown field, or a
 * subtree with `x-kubernetes-preserve-unknown-fields`) the node is `untyped`: maps are
 * granular, lists atomic.
 */

import type { SchemaNode, SchemaSet } from "./schema_set.ts";

export type Shape = "scalar" | "struct" | "map" | "list" | "untyped";

export interface FieldType {
  readonly shape: Shape;
  /** The schema node (resolved), when there is one. */
  readonly node?: SchemaNode;
  /**
   * struct: the declared field's type; an undeclared field is `untyped` when the struct
   * preserves unknown fields, else undefined. map: the value type for any key.
   * untyped: untyped. Others: undefined.
   */
  field(name: string): FieldType | undefined;
  /** list: the item type; untyped lists have untyped items. */
  readonly items?: FieldType;
  /** list: `atomic`, `set` (of scalars) or `map` (items keyed by `listMapKeys`); from
   * `x-kubernetes-list-type`, else from the patch markers (merge + merge key → map, merge →
   * set), else atomic. */
  readonly listType?: "atomic" | "set" | "map";
  readonly listMapKeys?: string[];
  /** struct / map: `atomic` (replaced and owned as a whole) or `granular` (default). */
  readonly mapType?: "atomic" | "granular";
  /** `x-kubernetes-patch-strategy` split on commas: `merge`, `retainKeys`, `replace`. */
  readonly patchStrategy: string[];
  readonly patchMergeKey?: string;
  /** `x-kubernetes-preserve-unknown-fields` on this node. */
  readonly preserveUnknownFields: boolean;
  /** The schema `default` of this node, if any (used to fill omitted list-map keys). */
  readonly defaultValue?: unknown;
}

class Untyped implements FieldType {
  readonly shape = "untyped" as const;
  readonly patchStrategy: string[] = [];
  readonly preserveUnknownFields = true;
  readonly listType = "atomic" as const;
  get items(): FieldType {
    return UNTYPED;
  }
  field(): FieldType {
    return UNTYPED;
  }
}

/** The type of a value with no schema: maps granular, lists atomic. */
export const UNTYPED: FieldType = new Untyped();

class SchemaType implements FieldType {
  readonly shape: Shape;
  readonly node: SchemaNode;
  readonly patchStrategy: string[];
  readonly patchMergeKey?: string;
  readonly preserveUnknownFields: boolean;
  readonly defaultValue?: unknown;
  readonly listType?: "atomic" | "set" | "map";
  readonly listMapKeys?: string[];
  readonly mapType?: "atomic" | "granular";
  readonly #schemas: SchemaSet;
  readonly #fields = new Map<string, FieldType | undefined>();
  #items?: FieldType;

  constructor(schemas: SchemaSet, node: SchemaNode) {
    this.#schemas = schemas;
    this.node = node;
    const strategy = node["x-kubernetes-patch-strategy"];
    this.patchStrategy = typeof strategy === "string" && strategy
      ? strategy.split(",").map((s) => s.trim())
      : [];
    this.patchMergeKey = node["x-kubernetes-patch-merge-key"];
    this.preserveUnknownFields = node["x-kubernetes-preserve-unknown-fields"] === true;
    this.defaultValue = node.default;
    this.shape = shapeOf(node);
    if (this.shape === "list") {
      const declared = node["x-kubernetes-list-type"];
      const keys = node["x-kubernetes-list-map-keys"];
      if (declared) {
        this.listType = declared;
      } else if (this.patchStrategy.includes("merge")) {
        this.listType = this.patchMergeKey ? "map" : "set";
      } else {
        this.listType = "atomic";
      }
      if (this.listType === "map") {
        this.listMapKeys = Array.isArray(keys) && keys.length
          ? keys
          : this.patchMergeKey
          ? [this.patchMergeKey]
          : [];
      }
    }
    if (this.shape === "struct" || this.shape === "map") {
      this.mapType = node["x-kubernetes-map-type"] === "atomic" ? "atomic" : "granular";
    }
  }

  get items(): FieldType | undefined {
    if (this.shape !== "list") return undefined;
    if (!this.#items) {
      const items = this.node.items;
      this.#items = items ? typeOfNode(this.#schemas, items) : UNTYPED;
    }
    return this.#items;
  }

  field(name: string): FieldType | undefined {
    if (this.shape !== "struct" && this.shape !== "map") return undefined;
    if (this.#fields.has(name)) return this.#fields.get(name);
    let out: FieldType | undefined;
    const props = this.node.properties;
    const extra = this.node.additionalProperties;
    if (props && Object.hasOwn(props, name)) {
      out = typeOfNode(this.#schemas, props[name]);
    } else if (extra && typeof extra === "object") {
      out = typeOfNode(this.#schemas, extra);
    } else if (this.preserveUnknownFields || extra === true) {
      out = UNTYPED;
    }
    this.#fields.set(name, out);
    return out;
  }
}

function shapeOf(node: SchemaNode): Shape {
  if (node["x-kubernetes-int-or-string"] === true) return "scalar";
  const type = node.type;
  if (type === "array") return "list";
  if (type === "object" || (type === undefined && (node.properties || node.additionalProperties))) {
    if (node.properties && Object.keys(node.properties).length) return "struct";
    const extra = node.additionalProperties;
    if (extra && typeof extra === "object") return "map";
    if (node.properties && node["x-kubernetes-preserve-unknown-fields"] !== true) return "struct";
    // `type: object` with nothing declared (e.g. FieldsV1, RawExtension): free-form.
    return "untyped";
  }
  if (type === undefined && !node.items) {
    // No type at all: free-form (x-kubernetes-preserve-unknown-fields or `{}`).
    return "untyped";
  }
  return "scalar";
}

const views = new WeakMap<SchemaSet, WeakMap<SchemaNode, FieldType>>();

function typeOfNode(schemas: SchemaSet, raw: SchemaNode): FieldType {
  let cache = views.get(schemas);
  if (!cache) views.set(schemas, cache = new WeakMap());
  const hit = cache.get(raw);
  if (hit) return hit;
  const node = schemas.resolve(raw);
  const out = shapeOf(node) === "untyped" ? UNTYPED : new SchemaType(schemas, node);
  cache.set(raw, out);
  return out;
}

/** The structural view of the named schema (e.g. `io.k8s.api.core.v1.ConfigMap`). Views are
 * built lazily and cached per schema set. */
export function typeOf(schemas: SchemaSet, schemaName: string): FieldType {
  const node = schemas.get(schemaName);
  if (!node) throw new Error(`unknown schema ${JSON.stringify(schemaName)}`);
  return typeOfNode(schemas, node);
}

/** The view of a free-standing schema node (e.g. a CRD's `openAPIV3Schema`), resolving
 * references through `schemas`. */
export function typeOfSchema(schemas: SchemaSet, node: SchemaNode): FieldType {
  return typeOfNode(schemas, node);
}
