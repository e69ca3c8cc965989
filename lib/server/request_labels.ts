/**
 * A request's labels in kube's request metrics (`CleanVerb`, `CleanScope`, `cleanDryRun` of
 * kube's endpoint metrics), from the request info computed once per request.
 *
 * Labels that come from the path are bounded to what the server serves, so that requests for
 * paths that address nothing cannot make new series, whoever sends them (a refusal by
 * authentication or authorization is counted too): a resource the catalogue does not serve is
 * labelled with its verb only; a subresource is labelled only when its resource serves it; a
 * non-resource path only when it is one of the server's endpoints or was answered (below 400).
 * A 404's subresource or path is left empty.
 */

import type { RequestLabels } from "../metrics/mod.ts";
import { queryParam, type RequestInfo } from "./request_info.ts";

/** What the server serves (the catalogue): the definition of `resource` in `group`/`version`,
 * and a number that changes whenever that may have changed. */
export interface ServedResources {
  lookup(group: string, version: string, resource: string): ServedDefinition | undefined;
  readonly revision: number;
}

/** Of a served resource's definition, the subresources it serves. */
export interface ServedDefinition {
  subresources?: readonly string[];
  computedSubresources?: Readonly<Record<string, unknown>>;
}

/** Serves every resource, without subresources (a watch stream's labels: it is being served,
 * and a watch has none). */
export const SERVES_ALL: ServedResources = { lookup: () => ({}), revision: 0 };

/** The server's own non-resource endpoints: labelled with their path even when refused. */
const ENDPOINTS = new Set([
  "/healthz",
  "/livez",
  "/readyz",
  "/version",
  "/metrics",
  "/api",
  "/apis",
  "/openapi/v2",
  "/openapi/v3",
  "/storage/snapshot",
]);

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
      subresource: nonResourceLabel(info.path, code),
      scope: "",
      component: "",
    };
  }
  const verb = verbLabel(req, info);
  const def = served.lookup(info.group, info.version, info.resource);
  if (def === undefined) {
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
    subresource: code === 404 || !servesSubresource(def, info.subresource) ? "" : info.subresource,
    scope: scopeLabel(info),
    component: "apiserver",
  };
}

/** A non-resource request's `subresource` label: its path, when that is bounded. */
function nonResourceLabel(path: string, code: number): string {
  if (ENDPOINTS.has(path)) return path;
  // Answered, so served: the server's handlers answer a bounded set of paths (discovery of the
  // served groups, health checks by name, trailing slashes, which repeated are not labelled).
  return code < 400 && !path.includes("//") ? path : "";
}

function servesSubresource(def: ServedDefinition, subresource: string): boolean {
  return subresource !== "" &&
    (def.subresources?.includes(subresource) === true ||
      def.computedSubresources?.[subresource] !== undefined);
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
