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

/** What the server serves (the catalogue): whether it serves `resource` in `group`/`version`,
 * and a number that changes whenever that may have changed. */
export interface ServedResources {
  lookup(group: string, version: string, resource: string): unknown;
  readonly revision: number;
}

/** Serves every resource (a watch stream's labels: it is being served). */
export const SERVES_ALL: ServedResources = { lookup: () => true, revision: 0 };

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
  served: ServedResources,
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
  const verb = verbLabel(req, info);
  if (served.lookup(info.group, info.version, info.resource) === undefined) {
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
    dryRun: dryRunLabel(url),
    group: info.group,
    version: info.version,
    resource: info.resource,
    subresource: code === 404 ? "" : info.subresource,
    scope: scopeLabel(info),
    component: "apiserver",
  };
}

/** A resource request's `verb` label: kube's `CleanVerb` (`APPLY` for a server-side apply). */
export function verbLabel(req: Request, info: RequestInfo): string {
  const verb = RESOURCE_VERBS[info.verb] ?? "other";
  return verb === "PATCH" && req.headers.get("Content-Type")?.startsWith(APPLY_PATCH)
    ? "APPLY"
    : verb;
}

/** A resource request's `scope` label: kube's `CleanScope`. */
export function scopeLabel(info: RequestInfo): string {
  return info.name || info.verb === "create"
    ? "resource"
    : info.namespace
    ? "namespace"
    : "cluster";
}

/** kube's `cleanDryRun`: the `dryRun` values sorted and joined; `invalid` for others than
 * `All`. */
export function dryRunLabel(url: URL): string {
  if (queryParam(url, "dryRun") === null) return "";
  const values = [...new Set(url.searchParams.getAll("dryRun"))].sort();
  return values.every((v) => v === "All") ? values.join(",") : "invalid";
}
