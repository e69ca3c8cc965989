/**
 * The operation model both renderers read (OpenAPI v3 in `v3.ts`, Swagger 2.0 in `v2.ts`):
 * one operation per method and path with its parameters, body and responses, the media types
 * they offer, and the set of operations and schemas one document holds.
 */

import type { GVK } from "./names.ts";
import type { Param } from "./parameters.ts";

export type Method = "get" | "put" | "post" | "patch" | "delete";
export type Action =
  | "get"
  | "list"
  | "watch"
  | "watchlist"
  | "post"
  | "put"
  | "patch"
  | "delete"
  | "deletecollection";

/** Kubernetes' spelling of the protobuf media type in OpenAPI documents. */
export const PROTOBUF = "application/vnd.kubernetes.protobuf";
export const OBJECT_MEDIA = ["application/json", PROTOBUF, "application/yaml"];
export const STREAM_MEDIA = [
  "application/json",
  "application/json;stream=watch",
  PROTOBUF,
  `${PROTOBUF};stream=watch`,
  "application/yaml",
];
export const PATCH_MEDIA = [
  "application/apply-patch+yaml",
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
];

export interface Response {
  description: string;
  schema?: string;
  media?: string[];
}

export interface Operation {
  path: string;
  method: Method;
  operationId: string;
  description: string;
  tag: string;
  action?: Action;
  gvk?: GVK;
  params: Param[];
  body?: { schema: string; required: boolean; media: string[] };
  responses: Record<string, Response>;
}

export const UNAUTHORIZED: Response = { description: "Unauthorized" };

export function ok(schema: string, media = OBJECT_MEDIA): Response {
  return { description: "OK", schema, media };
}

export function created(schema: string): Response {
  return { description: "Created", schema, media: OBJECT_MEDIA };
}

export function accepted(schema: string): Response {
  return { description: "Accepted", schema, media: OBJECT_MEDIA };
}

/** What one document holds: its operations and how its schemas show their GVKs. */
export interface DocSpec {
  ops: Operation[];
  /** Group-versions whose entries shared GVK lists keep. */
  keepGVs: Set<string>;
  /** GVKs to make sure of, by schema name. */
  ensure: Map<string, GVK[]>;
}
