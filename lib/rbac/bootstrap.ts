/**
 * Creates the default RBAC policy (policy.ts) at every start: each ClusterRole and
 * ClusterRoleBinding that is missing is created; one that exists is left as it is, so a
 * changed default role survives restarts.
 */

import { StatusError } from "../api/mod.ts";
import type { ResourceRegistry, StrategyContext } from "../registry/mod.ts";
import { SYSTEM_MASTERS } from "./escalation.ts";
import { BOOTSTRAP_CLUSTER_ROLE_BINDINGS, BOOTSTRAP_CLUSTER_ROLES } from "./policy.ts";

const CONTEXT: StrategyContext = {
  user: { username: "system:apiserver", groups: [SYSTEM_MASTERS, "system:authenticated"] },
};
const MANAGER = "platform-apiserver";

export async function ensureBootstrapPolicy(registries: {
  clusterRoles: ResourceRegistry;
  clusterRoleBindings: ResourceRegistry;
}): Promise<void> {
  const wanted: [ResourceRegistry, readonly Record<string, unknown>[]][] = [
    [registries.clusterRoles, BOOTSTRAP_CLUSTER_ROLES],
    [registries.clusterRoleBindings, BOOTSTRAP_CLUSTER_ROLE_BINDINGS],
  ];
  for (const [registry, objects] of wanted) {
    for (const obj of objects) {
      await registry.create("", structuredClone(obj), CONTEXT, { manager: MANAGER }).catch(
        (err) => {
          if (!(err instanceof StatusError && err.code === 409)) throw err;
        },
      );
    }
  }
}
