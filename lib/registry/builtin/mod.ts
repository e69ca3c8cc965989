/** The built-in resource definitions, in discovery order. */

import type { ResourceDefinition } from "../definition.ts";
import { configmaps, coreEvents, namespaces, secrets, serviceaccounts } from "./core.ts";
import { leases } from "./coordination.ts";
import { eventsV1 } from "./events.ts";
import { certificateSigningRequests } from "./certificates.ts";
import { customResourceDefinitions } from "./apiextensions.ts";
import { reviewDefinitions } from "./reviews.ts";

export function builtinDefinitions(): ResourceDefinition[] {
  return [
    namespaces,
    configmaps,
    secrets,
    serviceaccounts,
    coreEvents,
    leases,
    eventsV1,
    certificateSigningRequests,
    customResourceDefinitions,
    ...reviewDefinitions,
  ];
}
