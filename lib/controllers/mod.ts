/** The public surface of lib/controllers/ (lib/README.md). */
export { type NamespaceDefaults, startNamespaceDefaults } from "./namespace_defaults.ts";
export {
  labelStoredNamespaces,
  NamespaceController,
  namespaceLookup,
  namespaceObjects,
  SYSTEM_NAMESPACES,
} from "./namespace_lifecycle.ts";
export { ServiceController } from "./service_controller.ts";
export { PolicyStatusController, type PolicyStatusOptions } from "./policy_status.ts";
export { ControllerSet, type ControllerStarter, type RunningController } from "./controller_set.ts";
export {
  holderIdentity,
  JITTER_FACTOR,
  LeaderElector,
  type LeaderElectorOptions,
} from "./leader_election.ts";
export { type LeaderElectionRecord, LeaseLock, type ResourceLock } from "./lease_lock.ts";
