/**
 * Kubernetes' order of version names ("kube-aware" version priority): what discovery lists a
 * CRD's versions in, so that the first, the preferred version, is the most stable and newest.
 * Names like `v2`, `v1`, `v1beta2`, `v1alpha1` come first: GA before beta before alpha, then
 * the higher major, then the higher minor; any other name comes after them, alphabetically.
 */

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Negative when `a` comes before `b` (has the higher priority). */
export function compareVersionPriority(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) {
    if (ma) return -1;
    if (mb) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const stability = (m: RegExpExecArray) => m[2] === undefined ? 2 : m[2] === "beta" ? 1 : 0;
  return stability(mb) - stability(ma) || Number(mb[1]) - Number(ma[1]) ||
    Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}
