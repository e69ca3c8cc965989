/**
 * Metrics wired to what the start-up steps opened:
 * - stored objects per group-resource (`apiserver_storage_objects`), counted in the store at a
 *   scrape when the last count is older than `--etcd-count-metric-poll-period` (kube polls etcd
 *   that often; a count here is of the server's own copy, so counting lazily, on a scrape, costs
 *   nothing between);
 * - audited requests by their policy level (`apiserver_audit_level_total`).
 */

import { type Level, LEVELS } from "../../audit/mod.ts";
import type { ServerMetrics } from "../../metrics/mod.ts";
import { keyType } from "../../storage/mod.ts";
import type { ApiRegistries } from "./registries.ts";

/** Counts stored objects at most every `periodMs` (0: the metric is not reported). */
export function countStoredObjects(
  metrics: ServerMetrics,
  api: ApiRegistries,
  periodMs: number,
): void {
  if (periodMs <= 0) return;
  let counts: [string, number][] = [];
  let countedAt = -Infinity;
  metrics.sources.storageObjects = function* () {
    if (performance.now() - countedAt >= periodMs) {
      // Subresources and other versions of a resource share its prefix: counted once.
      const prefixes = new Set<string>();
      for (const [def, registry] of api.registries) {
        // Computed resources (reviews, token requests) store nothing.
        if (!def.review) prefixes.add(registry.listPrefix(""));
      }
      counts = [...prefixes].map((prefix) => [keyType(prefix), api.store.count(prefix)]);
      countedAt = performance.now();
    }
    yield* counts;
  };
}

/** `apiserver_audit_level_total`'s counting of a request's level: its four children found
 * once, not by their label at each request. */
export function levelCounter(metrics: ServerMetrics): (level: Level) => void {
  const children = new Map(LEVELS.map((level) => [level, metrics.auditLevels.child(level)]));
  return (level) => children.get(level)?.inc();
}
