/** The built-in resource definitions, in discovery order. */

import type { ResourceDefinition } from "../registry/mod.ts";
import { configmaps, coreEvents, namespaces, secrets, serviceaccounts } from "./core.ts";
import { leases } from "./coordination.ts";
import { eventsV1 } from "./events.ts";
import { certificateSigningRequests } from "./certificates.ts";
import { customResourceDefinitions } from "./apiextensions.ts";
import { reviewDefinitions } from "./reviews.ts";
import { rbacDefinitions } from "./rbac.ts";
import { PolicyIndex } from "../rbac/mod.ts";
import { serviceDefinition } from "./services.ts";
import { admissionRegistrationDefinitions } from "./admissionregistration.ts";
import type { ServiceAllocator } from "./service_ips.ts";

export interface BuiltinOptions {
  /** The RBAC rules the escalation checks of RBAC writes resolve against (the RBAC
   * authorizer's). @default an empty index: only system:masters, `escalate` or `bind` pass */
  rbacPolicy?: PolicyIndex;
  /** Hands out Service cluster IPs and node ports. @default none: Services cannot be
   * written (enough for callers that only read the catalogue) */
  serviceAllocator?: ServiceAllocator;
}

export function builtinDefinitions(opts: BuiltinOptions = {}): ResourceDefinition[] {
  return [
    namespaces,
    configmaps,
    secrets,
    serviceaccounts,
    serviceDefinition(opts.serviceAllocator),
    coreEvents,
    leases,
    eventsV1,
    certificateSigningRequests,
    customResourceDefinitions,
    ...reviewDefinitions,
    ...rbacDefinitions(opts.rbacPolicy ?? new PolicyIndex()),
    ...admissionRegistrationDefinitions,
  ];
}
export { customResourceDefinitions } from "./apiextensions.ts";
export {
  ADMISSIONREGISTRATION_GROUP,
  admissionRegistrationDefinitions,
} from "./admissionregistration.ts";
export { certificateSigningRequests } from "./certificates.ts";
export { leases } from "./coordination.ts";
export { NAMESPACE_FINALIZER, NAMESPACE_NAME_LABEL } from "./namespace.ts";
export { ServiceAllocator, type ServiceNetwork, serviceNetwork } from "./service_ips.ts";
