/**
 * RBAC as the server runs it: the default policy created, the authorizer following the RBAC
 * objects, and the ClusterRole aggregation controller.
 *
 * @example
 * ```ts
 * const policy = new PolicyIndex();              // shared with the RBAC definitions
 * const catalogue = new Catalogue(builtinDefinitions({ rbacPolicy: policy }));
 * // … registries …
 * const rbac = await startRbac({ sources, index: policy, aggregation: true, logger });
 * const authorizer = unionAuthorizer([privilegedGroupsAuthorizer(["system:masters"]), rbac.authorizer]);
 * // … serve; on shutdown:
 * await rbac.stop();
 * ```
 */

import type { Logger } from "../api/mod.ts";
import { ClusterRoleAggregator } from "./aggregation.ts";
import { type RbacAuthorizer, rbacAuthorizer, type RbacSources } from "./authorizer.ts";
import { ensureBootstrapPolicy } from "./bootstrap.ts";
import type { PolicyIndex } from "./policy_index.ts";

export { PolicyIndex, RBAC_GROUP } from "./policy_index.ts";
export { ClusterRoleAggregator } from "./aggregation.ts";
export { rbacAuthorizer };
export type { RbacAuthorizer, RbacSources };

export interface StartRbacOptions {
  sources: RbacSources;
  /** The index the RBAC definitions' escalation checks read (see builtinDefinitions). */
  index: PolicyIndex;
  /** Run the `clusterrole-aggregation` controller. */
  aggregation: boolean;
  logger: Logger;
}

export interface RunningRbac {
  authorizer: RbacAuthorizer;
  stop(): Promise<void>;
}

/** Creates the missing default roles and bindings, then starts the authorizer and, if asked,
 * the aggregation controller; resolves once the authorizer has loaded every RBAC object. */
export async function startRbac(opts: StartRbacOptions): Promise<RunningRbac> {
  await ensureBootstrapPolicy(opts.sources);
  const authorizer = rbacAuthorizer(opts.sources, { index: opts.index, logger: opts.logger });
  await authorizer.start();
  const aggregator = opts.aggregation
    ? new ClusterRoleAggregator({ clusterRoles: opts.sources.clusterRoles, logger: opts.logger })
    : undefined;
  await aggregator?.start();
  return {
    authorizer,
    async stop() {
      await aggregator?.stop();
      await authorizer.stop();
    },
  };
}
export { checkBindingWrite, checkRoleWrite } from "./escalation.ts";
export {
  defaultBinding,
  validateBinding,
  validateBindingUpdate,
  validateRole,
} from "./validation.ts";
