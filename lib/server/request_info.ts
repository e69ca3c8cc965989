/**
 * Request info: what a URL path and method address. Computed once, first in the chain, so
 * that authentication, authorization, audit and handlers all read the same answer; nothing
 * after it reads the group, namespace, name or verb from the URL again.
 *
 * Resource paths:
 *   /api/v1[/watch]/{resource}[/{name}[/{subresource}]]
 *   /api/v1[/watch]/namespaces/{namespace}/{resource}[/{name}[/{subresource}]]
 *   /apis/{group}/{version}/… (same shapes)
 * Everything else (/version, /healthz, /openapi/v3, /api, /apis, /apis/{group}) is a
 * non-resource request.
 *
 * Verbs are kube's: GET and HEAD are get (named), list or watch (`?watch=`); POST create; PUT
 * update; PATCH patch; DELETE delete (named) or deletecollection; the `/watch/` prefix is watch
 * whatever the method. No other method names a verb (the chain answers them 405 first).
 */

import type { Verb } from "../registry/mod.ts";
import { canonicalGroup, parseFieldSelectorSyntax, validatePathSegmentName } from "../api/mod.ts";

export interface RequestInfo {
  isResourceRequest: boolean;
  /** The URL path, as sent. */
  path: string;
  /** Kubernetes verb: get/list/watch/create/update/patch/delete/deletecollection for resource
   * requests (`""` for OPTIONS); the lowercase HTTP method for others. */
  verb: Verb | string;
  apiPrefix: "api" | "apis" | "";
  /** The API group in its canonical spelling (`certificates.k8s.io` is read as
   * `certificates.platform.io`, see lib/api/group_names.ts): every authorizer, handler and
   * log sees this one. */
  group: string;
  /** The client spelled a built-in group as Kubernetes does (`certificates.k8s.io`): answers
   * use that spelling. */
  kubeSpelling: boolean;
  version: string;
  /** The namespace segment; for the namespace object's own paths (`namespaces/{name}`,
   * `namespaces/{name}/status`) its name, as kube reports it. */
  namespace: string;
  /** The resource was addressed under `namespaces/{namespace}/`: only a namespaced resource
   * exists there. */
  namespaced: boolean;
  resource: string;
  subresource: string;
  /** The name in the path. */
  name: string;
  /**
   * A list or watch whose `fieldSelector` pins one `metadata.name`: that name, as the selector
   * reads it (never trimmed). The request is authorized as one on that name, as kube does.
   */
  selectedName: string;
  /** The legacy `/watch/` prefix was used. */
  legacyWatch: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

/** Parses a request's method and URL into a {@link RequestInfo}. Never throws. */
export function requestInfoOf(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: "",
    group: "",
    kubeSpelling: false,
    version: "",
    namespace: "",
    namespaced: false,
    resource: "",
    subresource: "",
    name: "",
    selectedName: "",
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
    info.group = canonicalGroup(parts[1]);
    info.kubeSpelling = info.group !== parts[1];
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
  // namespaces/{ns}/{resource}… addresses a resource in a namespace; namespaces[/{name}[/{sub}]]
  // the namespaces resource itself, whose own subresources (status, finalize) are not resources
  // in it.
  if (rest[0] === "namespaces" && rest.length >= 2) {
    info.namespace = rest[1];
    if (rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
      rest = rest.slice(2);
      info.namespaced = true;
    }
  }
  info.resource = rest[0] ?? "";
  info.name = rest[1] ?? "";
  info.subresource = rest.slice(2).join("/");
  info.verb = resourceVerb(method, info, url);
  if ((info.verb === "list" || info.verb === "watch") && !info.legacyWatch) {
    info.selectedName = selectedNameOf(url);
  }
  return info;
}

function resourceVerb(method: string, info: RequestInfo, url: URL): Verb | "" {
  if (info.legacyWatch) return "watch";
  switch (method) {
    case "GET":
    case "HEAD":
      // As kube: `watch` counts only without a name (a named GET is a get).
      if (info.name) return "get";
      return queryBool(url, "watch") ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return info.name ? "delete" : "deletecollection";
    default:
      return "";
  }
}

/** The name `fieldSelector=metadata.name=…` pins, if it is one that could be a path segment;
 * `""` otherwise (or when the selector does not parse: the handler answers that). */
function selectedNameOf(url: URL): string {
  const selector = queryParam(url, "fieldSelector");
  if (!selector) return "";
  let name: string | undefined;
  try {
    name = parseFieldSelectorSyntax(selector).requiresExactMatch("metadata.name");
  } catch {
    return "";
  }
  return name !== undefined && validatePathSegmentName(name).length === 0 ? name : "";
}

/** A query parameter of `url`, or null. A URL without a query, as most requests have, is not
 * parsed for it (`searchParams` builds and parses an object on first use). */
export function queryParam(url: URL, name: string): string | null {
  return url.search === "" ? null : url.searchParams.get(name);
}

/**
 * A boolean query parameter as kube's metav1 option conversion reads it
 * (apimachinery `Convert_Slice_string_To_bool`): undefined when absent; when present, its first
 * value is false if it is `0` or `false` in any case, and true otherwise, the empty value
 * (`?force`, `?watch=`) and any other word (`yes`) included. Never an error.
 */
export function queryBool(url: URL, name: string): boolean | undefined {
  return parseQueryBool(queryParam(url, name));
}

/** {@link queryBool} on a value already read (`null`: absent). */
export function parseQueryBool(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  return value !== "0" && value.toLowerCase() !== "false";
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
