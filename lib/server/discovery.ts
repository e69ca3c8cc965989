/**
 * Discovery, derived from the catalogue: `/api`, `/apis`, `/apis/{group}`, the
 * APIResourceList of every group-version, and the aggregated form
 * (`as=APIGroupDiscoveryList`, v2 and v2beta1) that kubectl asks for first.
 */

import {
  apiVersionOf,
  type Catalogue,
  type ResourceDefinition,
  SCALE_API_VERSION,
  SCALE_KIND,
} from "../registry/mod.ts";

/** What discovery lists: the catalogue, or the catalogue as served (served_catalogue.ts). */
export type DiscoverySource = Pick<Catalogue, "groups" | "resources">;

const SUBRESOURCE_VERBS = ["get", "patch", "update"];

/** Kind served by a subresource: approval/status/finalize answer with the parent kind,
 * scale with autoscaling/v1 Scale. */
function subresourceKind(
  def: ResourceDefinition,
  sub: string,
): { group: string; version: string; kind: string } {
  if (sub === "scale" && def.scale) {
    const [group, version] = SCALE_API_VERSION.split("/");
    return { group, version, kind: SCALE_KIND };
  }
  return { group: "", version: "", kind: def.kind };
}

export function apiVersions(serverAddress: string) {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

function groupEntry(name: string, versions: string[]) {
  const list = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: list, preferredVersion: list[0] };
}

export function apiGroupList(catalogue: DiscoverySource) {
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: catalogue.groups().map((g) => groupEntry(g.name, g.versions)),
  };
}

export function apiGroup(catalogue: DiscoverySource, name: string) {
  const g = catalogue.groups().find((x) => x.name === name);
  if (!g) return undefined;
  return { kind: "APIGroup", apiVersion: "v1", ...groupEntry(g.name, g.versions) };
}

export function apiResourceList(catalogue: DiscoverySource, group: string, version: string) {
  const defs = catalogue.resources(group, version);
  if (!defs.length) return undefined;
  const resources = [];
  for (const def of defs) {
    const entry: Record<string, unknown> = {
      name: def.plural,
      singularName: def.singular,
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: def.verbs,
    };
    if (def.shortNames?.length) entry.shortNames = def.shortNames;
    if (def.categories?.length) entry.categories = def.categories;
    resources.push(entry);
    for (const sub of def.subresources ?? []) {
      const { group, version, kind } = subresourceKind(def, sub);
      resources.push({
        name: `${def.plural}/${sub}`,
        singularName: "",
        namespaced: def.namespaced,
        ...(group ? { group, version } : {}),
        kind,
        verbs: sub === "finalize" ? ["update"] : SUBRESOURCE_VERBS,
      });
    }
    for (const [sub, kind] of Object.entries(def.computedSubresources ?? {})) {
      resources.push({
        name: `${def.plural}/${sub}`,
        singularName: "",
        namespaced: def.namespaced,
        group: kind.group,
        version: kind.version,
        kind: kind.kind,
        verbs: kind.verbs,
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: apiVersionOf({ group, version }),
    resources,
  };
}

function discoveryResource(def: ResourceDefinition) {
  const r: Record<string, unknown> = {
    resource: def.plural,
    responseKind: { group: "", version: "", kind: def.kind },
    scope: def.namespaced ? "Namespaced" : "Cluster",
    singularResource: def.singular,
    verbs: def.verbs,
  };
  if (def.shortNames?.length) r.shortNames = def.shortNames;
  if (def.categories?.length) r.categories = def.categories;
  const subresources: unknown[] = (def.subresources ?? []).map((sub) => ({
    subresource: sub,
    responseKind: subresourceKind(def, sub),
    verbs: sub === "finalize" ? ["update"] : SUBRESOURCE_VERBS,
  }));
  for (const [sub, kind] of Object.entries(def.computedSubresources ?? {})) {
    subresources.push({
      subresource: sub,
      responseKind: { group: kind.group, version: kind.version, kind: kind.kind },
      verbs: kind.verbs,
    });
  }
  if (subresources.length) r.subresources = subresources;
  return r;
}

/** The aggregated discovery document for `/api` (core) or `/apis` (named groups). */
export function aggregatedDiscovery(
  catalogue: DiscoverySource,
  which: "api" | "apis",
  apiVersion: string,
) {
  const groups = which === "api" ? [{ name: "", versions: ["v1"] }] : catalogue.groups();
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion,
    metadata: {},
    items: groups.map((g) => ({
      metadata: g.name ? { name: g.name } : {},
      versions: g.versions.map((v) => ({
        version: v,
        resources: catalogue.resources(g.name, v).map(discoveryResource),
        freshness: "Current",
      })),
    })),
  };
}
