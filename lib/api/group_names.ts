/**
 * Our API groups are Kubernetes' with `k8s.io` read as `platform.io`
 * (`certificates.k8s.io` is served as `certificates.platform.io`). Kubernetes' typed clients
 * (kubectl's `auth can-i`, `create token`) and its fixtures use the upstream spelling, so each
 * built-in group has two spellings; the `platform.io` one is canonical. Every other group,
 * custom ones ending in `k8s.io` included, has exactly one spelling.
 */

/** The built-in API groups, in the canonical spelling: those serving resources, and `meta` and
 * `apidiscovery`, whose kinds (Table, the options kinds, discovery documents) are not resources.
 * The core group (`""`) has one spelling. */
export const BUILTIN_GROUPS: ReadonlySet<string> = new Set([
  "admissionregistration.platform.io",
  "apidiscovery.platform.io",
  "apiextensions.platform.io",
  "authentication.platform.io",
  "authorization.platform.io",
  "certificates.platform.io",
  "coordination.platform.io",
  "events.platform.io",
  "meta.platform.io",
  "rbac.authorization.platform.io",
]);

const KUBE_SUFFIX = ".k8s.io";
const PLATFORM_SUFFIX = ".platform.io";

/**
 * The canonical spelling of `group`: `certificates.k8s.io` -> `certificates.platform.io` for
 * the built-in groups; any other group unchanged (`widgets.k8s.io` stays as it is).
 */
export function canonicalGroup(group: string): string {
  if (!group.endsWith(KUBE_SUFFIX)) return group;
  const platform = `${group.slice(0, -KUBE_SUFFIX.length)}${PLATFORM_SUFFIX}`;
  return BUILTIN_GROUPS.has(platform) ? platform : group;
}

/** Whether `group` is a built-in group in either spelling (`rbac.authorization.k8s.io`). */
export function isBuiltinGroup(group: string): boolean {
  return BUILTIN_GROUPS.has(canonicalGroup(group));
}

/** `certificates.k8s.io/v1` -> `certificates.platform.io/v1`; other apiVersions unchanged. */
export function toPlatformApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  if (slash < 0) return apiVersion;
  return `${canonicalGroup(apiVersion.slice(0, slash))}${apiVersion.slice(slash)}`;
}

/** `certificates.platform.io/v1` -> `certificates.k8s.io/v1` (the upstream spelling) for the
 * built-in groups; other apiVersions unchanged. */
export function toKubeApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  if (slash < 0) return apiVersion;
  const group = apiVersion.slice(0, slash);
  if (!BUILTIN_GROUPS.has(group)) return apiVersion;
  return `${group.slice(0, -PLATFORM_SUFFIX.length)}${KUBE_SUFFIX}${apiVersion.slice(slash)}`;
}

/** `rbac.authorization.platform.io` -> `rbac.authorization.k8s.io` for the built-in groups;
 * any other group unchanged. */
export function kubeGroup(group: string): string {
  if (!BUILTIN_GROUPS.has(group)) return group;
  return `${group.slice(0, -PLATFORM_SUFFIX.length)}${KUBE_SUFFIX}`;
}

/**
 * `obj` as a client that addressed it under Kubernetes' group name reads it: its `apiVersion`
 * and those of its managed fields entries in the upstream spelling, and so each item of a
 * list. Returns `obj` itself when nothing changes, else a copy (the input is not mutated:
 * it may be a stored value).
 */
// deno-lint-ignore no-explicit-any
export function kubeSpelled(obj: Record<string, any>): Record<string, any> {
  let out = obj;
  const copy = () => out === obj ? (out = { ...obj }) : out;
  if (typeof obj.apiVersion === "string") {
    const apiVersion = toKubeApiVersion(obj.apiVersion);
    if (apiVersion !== obj.apiVersion) copy().apiVersion = apiVersion;
  }
  const managed = obj.metadata?.managedFields;
  if (Array.isArray(managed)) {
    let changed = false;
    const entries = managed.map((entry) => {
      if (typeof entry?.apiVersion !== "string") return entry;
      const apiVersion = toKubeApiVersion(entry.apiVersion);
      if (apiVersion === entry.apiVersion) return entry;
      changed = true;
      return { ...entry, apiVersion };
    });
    if (changed) copy().metadata = { ...obj.metadata, managedFields: entries };
  }
  if (Array.isArray(obj.items)) {
    let changed = false;
    const items = obj.items.map((item: unknown) => {
      if (!item || typeof item !== "object" || Array.isArray(item)) return item;
      const spelled = kubeSpelled(item as Record<string, unknown>);
      if (spelled !== item) changed = true;
      return spelled;
    });
    if (changed) copy().items = items;
  }
  return out;
}
