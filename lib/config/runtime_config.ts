/**
 * Runtime config: which API versions and resources are served (`--runtime-config`).
 *
 * Keys, as in kube-apiserver:
 * - `api/all`, `api/ga`, `api/beta`, `api/alpha`: every version, or every version of a stage;
 * - `api/legacy`: accepted and ignored, as kube-apiserver does (its meaning is long gone);
 * - `v1` (also `api/v1`): the core group's v1;
 * - `group/version`, e.g. `apps/v1`, `certificates.platform.io/v1beta1`;
 * - `group/version/resource`, e.g. `apps/v1/deployments`; `v1/pods` for the core group.
 *
 * Keys are normalized: the core group has no group part (`v1`, `v1/pods`), and a built-in
 * group's Kubernetes spelling becomes the canonical one (`coordination.k8s.io/v1` →
 * `coordination.platform.io/v1`, see group_names.ts).
 *
 * @module
 */

import { ConfigError, quote } from "./config_error.ts";
import { parseBool } from "./value_parsers.ts";
import { canonicalGroup } from "../api/mod.ts";

/** The `api/*` keys. */
export const RUNTIME_CONFIG_STAGE_KEYS = ["api/all", "api/ga", "api/beta", "api/alpha"] as const;
/** A key kube-apiserver accepts and drops; so do we. */
export const RUNTIME_CONFIG_IGNORED_KEY = "api/legacy";

const VERSION = /^v[1-9]\d*((alpha|beta)[1-9]\d*)?$/;
const GROUP = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const RESOURCE = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

/** The stage of an API version: `v1` → ga, `v2beta1` → beta, `v1alpha3` → alpha. */
export function versionStage(version: string): "ga" | "beta" | "alpha" {
  if (version.includes("alpha")) return "alpha";
  if (version.includes("beta")) return "beta";
  return "ga";
}

/** The normalized key of a group/version (`v1` for the core group). */
export function groupVersionKey(group: string, version: string): string {
  return group === "" ? version : `${group}/${version}`;
}

/**
 * Normalize one key, or throw an Error saying why it is not a runtime-config key.
 *
 * @example
 * ```ts
 * normalizeRuntimeConfigKey("api/v1"); // "v1"
 * normalizeRuntimeConfigKey("apps/v1/deployments"); // "apps/v1/deployments"
 * ```
 */
export function normalizeRuntimeConfigKey(key: string): string {
  const k = key.trim();
  if ((RUNTIME_CONFIG_STAGE_KEYS as readonly string[]).includes(k)) return k;
  if (k === RUNTIME_CONFIG_IGNORED_KEY) return k;
  let parts = k.split("/");
  // `api/v1` and `api/v1/pods` are the legacy spellings of the core group.
  if (parts[0] === "api" && parts.length >= 2 && VERSION.test(parts[1])) parts = parts.slice(1);
  const bad = () =>
    new Error(
      `${
        quote(key)
      } is not a runtime-config key (api/all, api/ga, api/beta, api/alpha, api/legacy, v1, group/version or group/version/resource)`,
    );
  if (parts.some((p) => p === "")) throw bad();
  if (VERSION.test(parts[0])) {
    // Core group: v1 or v1/resource.
    if (parts.length === 1) return parts[0];
    if (parts.length === 2 && RESOURCE.test(parts[1])) return parts.join("/");
    throw bad();
  }
  if (parts.length < 2 || parts.length > 3) throw bad();
  if (!GROUP.test(parts[0]) || !VERSION.test(parts[1])) throw bad();
  if (parts.length === 3 && !RESOURCE.test(parts[2])) throw bad();
  return [canonicalGroup(parts[0]), ...parts.slice(1)].join("/");
}

/**
 * Parse the flag form `key[=true|false],…`; an omitted value means true. Repeated keys: the
 * last wins.
 *
 * @throws {ConfigError} naming the key, without a source prefix (the caller adds it).
 * @example
 * ```ts
 * parseRuntimeConfig("api/alpha,apps/v1=false"); // Map {api/alpha => true, apps/v1 => false}
 * ```
 */
export function parseRuntimeConfig(text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const item of text.split(",")) {
    const entry = item.trim();
    if (entry === "") continue;
    const eq = entry.indexOf("=");
    const rawKey = eq === -1 ? entry : entry.slice(0, eq);
    const rawValue = eq === -1 ? "true" : entry.slice(eq + 1).trim();
    let key: string;
    let value: boolean;
    try {
      key = normalizeRuntimeConfigKey(rawKey);
      value = parseBool(rawValue);
    } catch (err) {
      throw new ConfigError(`${rawKey.trim()}: ${(err as Error).message}`);
    }
    out.set(key, value);
  }
  return out;
}

/** The API surface a runtime config is checked against. */
export interface KnownApis {
  /** Normalized group/versions: `v1`, `apps/v1`, … */
  groupVersions: string[];
  /** Normalized resources: `v1/pods`, `apps/v1/deployments`, … */
  resources: string[];
}

/**
 * The keys of `map` that name a group/version or resource the server does not serve, one
 * message per key (empty when all are known). `api/*` keys are always valid.
 *
 * @example
 * ```ts
 * validateRuntimeConfig(new Map([["foo.io/v1", true]]), {groupVersions: ["v1"], resources: []});
 * // ['unknown group/version "foo.io/v1"']
 * ```
 */
export function validateRuntimeConfig(
  map: ReadonlyMap<string, boolean>,
  known: KnownApis,
): string[] {
  const gvs = new Set(known.groupVersions);
  const resources = new Set(known.resources);
  const errors: string[] = [];
  for (const key of map.keys()) {
    if ((RUNTIME_CONFIG_STAGE_KEYS as readonly string[]).includes(key)) continue;
    if (key === RUNTIME_CONFIG_IGNORED_KEY) continue;
    const parts = key.split("/");
    const isCore = VERSION.test(parts[0]);
    const isResource = isCore ? parts.length === 2 : parts.length === 3;
    if (isResource) {
      if (!resources.has(key)) errors.push(`unknown resource ${quote(key)}`);
    } else if (!gvs.has(key)) {
      errors.push(`unknown group/version ${quote(key)}`);
    }
  }
  return errors;
}

/**
 * Whether a group/version (or one of its resources) is served. The most specific setting
 * wins: resource, then group/version, then `api/<stage>`, then `api/all`; without any,
 * stable versions are on and beta/alpha versions off (unless `onByDefault`).
 *
 * @example
 * ```ts
 * const rc = parseRuntimeConfig("api/beta=true,apps/v1beta1=false");
 * isEnabled(rc, "apps", "v1beta2"); // true
 * isEnabled(rc, "apps", "v1beta1"); // false
 * isEnabled(rc, "", "v1", "pods"); // true
 * ```
 */
export function isEnabled(
  map: ReadonlyMap<string, boolean>,
  group: string,
  version: string,
  resource?: string,
  onByDefault?: boolean,
): boolean {
  const gv = groupVersionKey(group, version);
  if (resource !== undefined) {
    const r = map.get(`${gv}/${resource}`);
    if (r !== undefined) return r;
  }
  const v = map.get(gv);
  if (v !== undefined) return v;
  const stage = versionStage(version);
  const s = map.get(`api/${stage}`);
  if (s !== undefined) return s;
  const all = map.get("api/all");
  if (all !== undefined) return all;
  return onByDefault ?? stage === "ga";
}
