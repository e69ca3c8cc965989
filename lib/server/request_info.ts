/**
 * Request info: what a URL path and method address. Computed once, first in the chain, so
 * that authentication, authorization, audit and handlers all read the same answer.
 *
 * Resource paths:
 *   /api/v1[/watch]/{resource}[/{name}[/{subresource}]]
 *   /api/v1[/watch]/namespaces/{namespace}/{resource}[/{name}[/{subresource}]]
 *   /apis/{group}/{version}/… (same shapes)
 * Everything else (/version, /healthz, /openapi/v3, /api, /apis, /apis/{group}) is a
 * non-resource request.
 */

import type { Verb } from "../registry/definition.ts";

export interface RequestInfo {
  isResourceRequest: boolean;
  /** The URL path, as sent. */
  path: string;
  /** Kubernetes verb: get/list/watch/create/update/patch/delete/deletecollection for resource
   * requests; the lowercase HTTP method for others. */
  verb: Verb | string;
  apiPrefix: "api" | "apis" | "";
  group: string;
  version: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** The legacy `/watch/` prefix was used. */
  legacyWatch: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

function isWatchParam(v: string | null): boolean {
  return v === "1" || v === "true";
}

/** Parses a request's method and URL into a {@link RequestInfo}. Never throws. */
export function requestInfoOf(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: "",
    group: "",
    version: "",
    namespace: "",
    resource: "",
    subresource: "",
    name: "",
    legacyWatch: false,
  };
  const parts: string[] = [];
  const raw = path.split("/");
  for (let i = 1; i < raw.length; i++) {
    // Only a segment with an escape needs decoding (decodeURIComponent is a slow builtin).
    if (raw[i] !== "") parts.push(raw[i].includes("%") ? safeDecode(raw[i]) : raw[i]);
  }
  if (parts.length === 0) return info;
  let rest: string[];
  if (parts[0] === "api") {
    if (parts.length < 3) return info; // /api, /api/v1 are discovery
    info.apiPrefix = "api";
    info.version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === "apis") {
    if (parts.length < 4) return info; // /apis, /apis/g, /apis/g/v are discovery
    info.apiPrefix = "apis";
    info.group = parts[1];
    info.version = parts[2];
    rest = parts.slice(3);
  } else {
    return info;
  }
  info.isResourceRequest = true;
  if (rest[0] === "watch") {
    info.legacyWatch = true;
    rest = rest.slice(1);
  }
  // namespaces/{ns}/{resource}… addresses a namespaced resource; namespaces[/{name}[/{sub}]]
  // addresses the namespaces resource itself.
  // The namespace object's own subresources (status, finalize) are not resources in it.
  if (rest[0] === "namespaces" && rest.length >= 2) {
    info.namespace = rest[1]; // the namespace object is "in" itself, as kube reports it
    if (rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  }
  info.resource = rest[0] ?? "";
  info.name = rest[1] ?? "";
  info.subresource = rest.slice(2).join("/");
  if (info.resource === "namespaces" && !info.name) info.namespace = "";

  const watch = info.legacyWatch || isWatchParam(queryParam(url, "watch"));
  switch (method) {
    case "GET":
    case "HEAD":
      info.verb = watch ? "watch" : info.name ? "get" : "list";
      break;
    case "POST":
      info.verb = "create";
      break;
    case "PUT":
      info.verb = "update";
      break;
    case "PATCH":
      info.verb = "patch";
      break;
    case "DELETE":
      info.verb = info.name ? "delete" : "deletecollection";
      break;
    default:
      info.verb = method.toLowerCase();
  }
  return info;
}

/** A query parameter of `url`, or null. A URL without a query, as most requests have, is not
 * parsed for it (`searchParams` builds and parses an object on first use). */
export function queryParam(url: URL, name: string): string | null {
  return url.search === "" ? null : url.searchParams.get(name);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
