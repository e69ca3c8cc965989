/**
 * A request's labels in kube's request metrics (`CleanVerb`, `CleanScope`, `cleanDryRun` of
 * kube's endpoint metrics), from the request info computed once per request.
 *
 * Labels that come from the path are bounded to what the server serves, so that requests for
 * paths that address nothing cannot make new series: a resource the catalogue does not serve
 * is labelled with its verb only, and a 404's subresource (or non-resource path) is left empty.
 */

import type { RequestLabels } from "../metrics/mod.ts";
import { queryParam, type RequestInfo } from "./request_info.ts";

/** Whether the server serves `resource` in `group`/`version`. */
export type ServedResource = (group: string, version: string, resource: string) => boolean;

const RESOURCE_VERBS: Record<string, string> = {
  get: "GET",
  list: "LIST",
  watch: "WATCH",
  create: "POST",
  update: "PUT",
  patch: "PATCH",
  delete: "DELETE",
  deletecollection: "DELETECOLLECTION",
};

const NON_RESOURCE_VERBS: Record<string, string> = {
  GET: "GET",
  HEAD: "GET",
  POST: "POST",
  PUT: "PUT",
  PATCH: "PATCH",
  DELETE: "DELETE",
};

const APPLY_PATCH = "application/apply-patch+yaml";

export function requestLabelsOf(
  req: Request,
  url: URL,
  info: RequestInfo,
  served: ServedResource,
  code: number,
): RequestLabels {
  if (!info.isResourceRequest) {
    return {
      verb: NON_RESOURCE_VERBS[req.method] ?? "other",
      dryRun: "",
      group: "",
      version: "",
      resource: "",
      subresource: code === 404 ? "" : info.path,
      scope: "",
      component: "",
    };
  }
  let verb = RESOURCE_VERBS[info.verb] ?? "other";
  if (verb === "PATCH" && req.headers.get("Content-Type")?.startsWith(APPLY_PATCH)) {
    verb = "APPLY";
  }
  if (!served(info.group, info.version, info.resource)) {
    return {
      verb,
      dryRun: "",
      group: "",
      version: "",
      resource: "",
      subresource: "",
      scope: "",
      component: "apiserver",
    };
  }
  return {
    verb,
    dryRun: dryRunOf(url),
    group: info.group,
    version: info.version,
    resource: info.resource,
    subresource: code === 404 ? "" : info.subresource,
    scope: info.name || info.verb === "create"
      ? "resource"
      : info.namespace
      ? "namespace"
      : "cluster",
    component: "apiserver",
  };
}

/** kube's `cleanDryRun`: the `dryRun` values sorted and joined; `invalid` for others than
 * `All`. */
function dryRunOf(url: URL): string {
  if (queryParam(url, "dryRun") === null) return "";
  const values = [...new Set(url.searchParams.getAll("dryRun"))].sort();
  return values.every((v) => v === "All") ? values.join(",") : "invalid";
}
