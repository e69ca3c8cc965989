/** The shapes every layer shares: an object as it travels through the server, the verbs of
 * a request, and a column of the Table form. */

/** A JSON object as it travels through the server. */
// deno-lint-ignore no-explicit-any
export type KubeObject = Record<string, any>;

export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "delete"
  | "deletecollection";

export const ALL_VERBS: Verb[] = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];

/** A column of the Table form (`kubectl get`), besides Name and Age. */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** OpenAPI format of the cells (`name` for the Name column). */
  format?: string;
  /** Short description for the column header's tooltip. */
  description?: string;
  /** Priority 0 = shown by default; >0 only with `-o wide`. */
  priority?: number;
  /** Computes the cell from the object. */
  value: (obj: KubeObject) => unknown;
}
