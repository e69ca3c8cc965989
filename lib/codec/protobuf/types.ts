/** The values the protobuf codec's API speaks: JSON-shaped objects and their apiVersion/kind. */

/** A JSON-shaped object (what the JSON API serves). */
export type JsonObject = Record<string, unknown>;

/** An apiVersion (platform.io spelling) and kind. */
export interface GroupVersionKind {
  apiVersion: string;
  kind: string;
}

/** Whether a value is a JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
