/**
 * Which built-in resources are served under a runtime config (`--runtime-config`), and the
 * start-up checks that keep the server whole when some are not.
 *
 * A resource left out here is gone everywhere at once: discovery, OpenAPI and routing all read
 * the catalogue built from what this returns. What the server itself needs:
 *
 * - `v1/namespaces` (so the core `v1`): the system namespaces live there and every namespaced
 *   write is checked against them. It cannot be disabled.
 * - the four RBAC resources, while RBAC authorizes requests (the default, or an
 *   `--authorization-config` naming RBAC): the authorizer reads them. With other authorizers
 *   they may go, and the RBAC authorizer and its aggregation controller do not start.
 * - The rest turn their feature off: without apiextensions no custom resources (the CRD
 *   controller does not start), without certificates no CSR controller, without
 *   `v1/serviceaccounts` no service account authenticates (no token can be issued either).
 *
 * @module
 */

import { ConfigError, groupVersionKey, isEnabled, validateRuntimeConfig } from "../config/mod.ts";
import { RBAC_GROUP } from "../rbac/mod.ts";
import type { ResourceDefinition } from "../registry/mod.ts";
import type { AuthorizationConfig } from "../auth/mod.ts";

/** The RBAC resources the RBAC authorizer reads. */
export const RBAC_RESOURCES = ["roles", "rolebindings", "clusterroles", "clusterrolebindings"];

export interface ServedApisOptions {
  /** Whether RBAC is one of the authorizers (then its resources cannot be disabled). */
  rbacAuthorizes: boolean;
}

/**
 * The definitions of `all` that `runtimeConfig` leaves on, in their order.
 *
 * @throws {ConfigError} (one line, prefixed `--runtime-config:`) for a key naming no served
 * group/version or resource, or a setting that disables what the server cannot do without.
 * @example
 * ```ts
 * servedDefinitions(builtinDefinitions(), new Map([["coordination.platform.io/v1", false]]), {
 *   rbacAuthorizes: true,
 * }); // every built-in but leases
 * ```
 */
export function servedDefinitions(
  all: readonly ResourceDefinition[],
  runtimeConfig: ReadonlyMap<string, boolean>,
  opts: ServedApisOptions,
): ResourceDefinition[] {
  const errors = validateRuntimeConfig(runtimeConfig, {
    groupVersions: [...new Set(all.map((d) => groupVersionKey(d.group, d.version)))],
    resources: all.map((d) => `${groupVersionKey(d.group, d.version)}/${d.plural}`),
  });
  if (errors.length) throw new ConfigError(`--runtime-config: ${errors.join("; ")}`);
  const served = all.filter((d) =>
    isEnabled(runtimeConfig, d.group, d.version, d.plural, d.betaOnByDefault)
  );
  const has = (group: string, plural: string) =>
    served.some((d) => d.group === group && d.version === "v1" && d.plural === plural);

  if (!has("", "namespaces")) {
    throw new ConfigError(
      isEnabled(runtimeConfig, "", "v1")
        ? "--runtime-config: v1/namespaces cannot be disabled: the server keeps its system " +
          "namespaces there"
        : "--runtime-config: v1 (the core API) cannot be disabled: the server keeps its system " +
          "namespaces there (with api/all=false or api/ga=false, add v1=true)",
    );
  }
  if (opts.rbacAuthorizes) {
    const off = RBAC_RESOURCES.find((r) => !has(RBAC_GROUP, r));
    if (off !== undefined) {
      const what = RBAC_RESOURCES.every((r) => !has(RBAC_GROUP, r))
        ? `${RBAC_GROUP}/v1`
        : `${RBAC_GROUP}/v1/${off}`;
      throw new ConfigError(
        `--runtime-config: ${what} cannot be disabled while RBAC authorizes requests ` +
          "(use an --authorization-config without RBAC)",
      );
    }
  }
  return served;
}

/** Whether every resource the RBAC authorizer reads is served. */
export function rbacServed(served: readonly ResourceDefinition[]): boolean {
  return RBAC_RESOURCES.every((r) =>
    served.some((d) => d.group === RBAC_GROUP && d.version === "v1" && d.plural === r)
  );
}

/** Whether RBAC authorizes requests: by default, or when the authorization config names it. */
export function rbacAuthorizes(config: AuthorizationConfig | undefined): boolean {
  return config?.authorizers.some((a) => a.type === "RBAC") ?? true;
}
