/**
 * Names in the OpenAPI documents: the schema names of the shared apimachinery types, the GVK
 * marker, and how groups, versions and kinds are spelled in operation ids, tags and document
 * paths (`Core`, `rbacAuthorization_v1`, `apis/<group>/<version>`).
 */

import { REF_PREFIX, type SchemaNode } from "../../schema/mod.ts";
import { isBuiltinGroup } from "../../api/mod.ts";

/** A group-version-kind, as `x-kubernetes-group-version-kind` lists it. */
export interface GVK {
  group: string;
  kind: string;
  version: string;
}

export const GVK_KEY = "x-kubernetes-group-version-kind";
export const META = "io.k8s.apimachinery.pkg.apis.meta.v1.";
export const DELETE_OPTIONS = `${META}DeleteOptions`;
export const STATUS = `${META}Status`;
export const WATCH_EVENT = `${META}WatchEvent`;
export const PATCH = `${META}Patch`;
export const API_RESOURCE_LIST = `${META}APIResourceList`;
export const API_VERSIONS = `${META}APIVersions`;
export const API_GROUP_LIST = `${META}APIGroupList`;
export const API_GROUP = `${META}APIGroup`;
export const VERSION_INFO = "io.k8s.apimachinery.pkg.version.Info";

/** The `GVK` suffix the platform gives the groups it serves. */
export const GROUP_SUFFIX = ".platform.io";
const KUBE_GROUP_SUFFIX = ".k8s.io";

function words(s: string): string[] {
  return s.split(/[.\-]/).filter(Boolean);
}

export function upperFirst(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

export function lowerFirst(s: string): string {
  return s ? s[0].toLowerCase() + s.slice(1) : s;
}

/** `""` -> `Core`, `certificates.platform.io` -> `Certificates`,
 * `rbac.authorization.platform.io` -> `RbacAuthorization`, `stable.example.com` ->
 * `StableExampleCom`. */
export function groupCamel(group: string): string {
  if (!group) return "Core";
  const base = group.endsWith(GROUP_SUFFIX)
    ? group.slice(0, -GROUP_SUFFIX.length)
    : isBuiltinGroup(group)
    ? group.slice(0, -KUBE_GROUP_SUFFIX.length)
    : group;
  return words(base).map(upperFirst).join("");
}

/** The tag of a group-version's operations: `core_v1`, `rbacAuthorization_v1`. */
export function tagOf(group: string, version: string): string {
  return `${lowerFirst(groupCamel(group))}_${version}`;
}

/** The document path of a group-version: `api/v1`, `apis/certificates.platform.io/v1`. */
export function documentPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export function article(word: string): string {
  return /^[AEIOU]/.test(word) ? "an" : "a";
}

export function gvString(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** The list schema of a kind schema: `…ConfigMap` -> `…ConfigMapList`. */
export function listSchemaName(schema: string): string {
  return `${schema}List`;
}

/** A reference to the schema `name`. */
export function ref(name: string): SchemaNode {
  return { $ref: REF_PREFIX + name };
}
