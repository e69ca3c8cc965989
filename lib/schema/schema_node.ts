/**
 * One node of an OpenAPI v3 schema ({@link SchemaNode}), its references (`$ref` and kube's
 * `allOf: [{$ref}]` wrapper) and the field paths that address nodes below a schema
 * (`spec.usages[0]`, `data[key]`), with the wording of unknown-field errors. The vocabulary
 * the schema set and its checks share.
 *
 * @module
 */

/** One node of an OpenAPI v3 schema as stored (plus any other key it carries). */
export interface SchemaNode {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  $ref?: string;
  allOf?: SchemaNode[];
  nullable?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-patch-strategy"?: string;
  "x-kubernetes-patch-merge-key"?: string;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-group-version-kind"?: { group: string; version: string; kind: string }[];
  [key: string]: unknown;
}

/** The prefix of a `$ref` into `components.schemas`. */
export const REF_PREFIX = "#/components/schemas/";

/** The schema name a `$ref` points at, or undefined when `node` is not a reference. */
export function refName(node: SchemaNode): string | undefined {
  const ref = node.$ref;
  if (typeof ref !== "string") return undefined;
  return ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : ref;
}

/** The single reference of an `allOf: [{$ref}]` wrapper (kube's way to attach a description
 * or default to a referenced type), or of a plain `$ref` node. */
export function wrappedRef(node: SchemaNode): string | undefined {
  const direct = refName(node);
  if (direct !== undefined) return direct;
  const all = node.allOf;
  if (Array.isArray(all) && all.length === 1 && typeof all[0]?.$ref === "string") {
    return refName(all[0]);
  }
  return undefined;
}

/** `spec.usages[0]`, `data[a.b]`, `status.conditions[]` -> segments. */
export function parsePath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      i++;
      continue;
    }
    if (c === "[") {
      const end = path.indexOf("]", i);
      const inner = end < 0 ? path.slice(i + 1) : path.slice(i + 1, end);
      i = end < 0 ? path.length : end + 1;
      out.push(inner === "" ? "[]" : /^\d+$/.test(inner) ? Number(inner) : inner);
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== "." && path[j] !== "[") j++;
    out.push(path.slice(i, j));
    i = j;
  }
  return out;
}

/** The text of a strict decoding failure, as kube words it:
 * `unknown field "spec.foo", unknown field "bar"`. */
export function unknownFieldsMessage(paths: string[]): string {
  return paths.map((p) => `unknown field ${JSON.stringify(p)}`).join(", ");
}
