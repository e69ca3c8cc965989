/**
 * Our API groups are Kubernetes' with `k8s.io` read as `platform.io`
 * (`certificates.k8s.io` is served as `certificates.platform.io`). Kubernetes' typed clients
 * (kubectl's `auth can-i`, `create token`) and its fixtures use the upstream spelling; these
 * convert apiVersions between the two.
 */

/** `certificates.k8s.io/v1` -> `certificates.platform.io/v1`; other apiVersions unchanged. */
export function toPlatformApiVersion(apiVersion: string): string {
  return renameGroup(apiVersion, "k8s.io", "platform.io");
}

/** `certificates.platform.io/v1` -> `certificates.k8s.io/v1` (the upstream spelling). */
export function toKubeApiVersion(apiVersion: string): string {
  return renameGroup(apiVersion, "platform.io", "k8s.io");
}

/** `authorization.k8s.io` -> `authorization.platform.io`; other group names unchanged. */
export function toPlatformGroup(group: string): string {
  return group === "k8s.io"
    ? "platform.io"
    : group.endsWith(".k8s.io")
    ? `${group.slice(0, -".k8s.io".length)}.platform.io`
    : group;
}

function renameGroup(apiVersion: string, from: string, to: string): string {
  const slash = apiVersion.indexOf("/");
  if (slash < 0) return apiVersion;
  const group = apiVersion.slice(0, slash);
  const renamed = group === from
    ? to
    : group.endsWith(`.${from}`)
    ? `${group.slice(0, -from.length)}${to}`
    : group;
  return `${renamed}${apiVersion.slice(slash)}`;
}
