/** `/version`: kubectl's dispatcher picks the kubectl whose minor matches ours. */

export const KUBE_MAJOR = "1";
export const KUBE_MINOR = "32";
export const PLATFORM_VERSION = "0.1.0";

export function versionInfo() {
  return {
    major: KUBE_MAJOR,
    minor: KUBE_MINOR,
    gitVersion: `v${KUBE_MAJOR}.${KUBE_MINOR}.0+platform.${PLATFORM_VERSION}`,
    gitCommit: "",
    gitTreeState: "clean",
    buildDate: "2026-11-22T00:00:00Z",
    goVersion: `deno${Deno.version.deno}`,
    compiler: "deno",
    platform: `${Deno.build.os}/${Deno.build.arch === "x86_64" ? "amd64" : Deno.build.arch}`,
  };
}
