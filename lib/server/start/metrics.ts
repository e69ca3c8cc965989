/**
 * The metrics read when scraped from what the start-up steps opened: stored objects per
 * group-resource (`apiserver_storage_objects`), counted in the store at each scrape.
 */

import type { ServerMetrics } from "../../metrics/mod.ts";
import { keyType } from "../../storage/mod.ts";
import type { ApiRegistries } from "./registries.ts";

export function countStoredObjects(metrics: ServerMetrics, api: ApiRegistries): void {
  metrics.sources.storageObjects = function* () {
    // Subresources and other versions of a resource share its prefix: counted once.
    const prefixes = new Set<string>();
    for (const [def, registry] of api.registries) {
      // Computed resources (reviews, token requests) store nothing.
      if (!def.review) prefixes.add(registry.listPrefix(""));
    }
    for (const prefix of prefixes) yield [keyType(prefix), api.store.count(prefix)];
  };
}
