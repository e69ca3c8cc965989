/**
 * A watch stream's metrics: `apiserver_registered_watchers` and `apiserver_watch_events_total`
 * by the watched group, version and kind, and `apiserver_longrunning_requests` by the request's
 * labels. The children are found once per stream.
 */

import type { ServerMetrics } from "../../metrics/mod.ts";
import type { ResourceRegistry } from "../../registry/mod.ts";
import type { RequestContext } from "../context.ts";
import { requestLabelsOf, SERVES_ALL } from "../request_labels.ts";

export interface WatchMeter {
  opened(): void;
  closed(): void;
  /** `n` events went out. */
  sent(n: number): void;
}

export function watchMeter(
  metrics: ServerMetrics,
  ctx: RequestContext,
  registry: ResourceRegistry,
): WatchMeter {
  const def = registry.def;
  const version = registry.apiVersion.includes("/")
    ? registry.apiVersion.slice(registry.apiVersion.indexOf("/") + 1)
    : registry.apiVersion;
  const watchers = metrics.registeredWatchers.child(def.group, version, def.kind);
  const events = metrics.watchEvents.child(def.group, version, def.kind);
  // The stream is served, so its labels are those of a served resource.
  const l = requestLabelsOf(ctx.req, ctx.url, ctx.info, SERVES_ALL, 200);
  const running = metrics.longRunning.child(
    l.verb,
    l.group,
    l.version,
    l.resource,
    l.subresource,
    l.scope,
    l.component,
  );
  return {
    opened() {
      watchers.inc();
      running.inc();
    },
    closed() {
      watchers.dec();
      running.dec();
    },
    sent: (n) => events.inc(n),
  };
}
