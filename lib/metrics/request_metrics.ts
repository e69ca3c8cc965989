/**
 * The per-request metrics of kube's endpoint instrumentation: `apiserver_request_total`,
 * `apiserver_request_duration_seconds` and `apiserver_response_sizes`. A request's series
 * (verb … component) holds the children of all three metrics; callers keep the series they
 * find (the request recorder keeps one per served resource's labels).
 */

import { REQUEST_DURATION_BUCKETS, RESPONSE_SIZE_BUCKETS } from "./buckets.ts";
import type { CounterChild, HistogramChild } from "./metric.ts";
import type { MetricsRegistry } from "./registry.ts";

/** kube's labels of a request, as `CleanVerb`, `CleanScope` and the installer give them. */
export interface RequestLabels {
  /** `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`, `DELETECOLLECTION`. */
  verb: string;
  /** The `dryRun` values, sorted and joined by commas; "" when none. */
  dryRun: string;
  group: string;
  version: string;
  resource: string;
  /** For non-resource requests, the path (`/healthz`), as kube labels them. */
  subresource: string;
  /** `resource`, `namespace`, `cluster`, or "" for non-resource requests. */
  scope: string;
  /** `apiserver` for resource requests, "" for others. */
  component: string;
}

/** The children of one set of request labels, as {@link RequestMetrics.series} finds them. */
export interface RequestSeries {
  readonly labels: readonly string[];
}

interface Series extends RequestSeries {
  duration: HistogramChild;
  /** Made with the first size known (a watch has none). */
  sizes?: HistogramChild;
  byCode: Map<number, CounterChild>;
  readonly labels: string[];
}

export class RequestMetrics {
  readonly #total;
  readonly #duration;
  readonly #sizes;
  /** Series by verb, dry run, group, version, resource, subresource, scope, component. */
  readonly #series = new Map<string, unknown>();
  /** Every request recorded (with `--workers`, this thread's: `platform_thread_requests_total`). */
  count = 0;

  constructor(registry: MetricsRegistry) {
    const labels = ["verb", "group", "version", "resource", "subresource", "scope", "component"];
    this.#total = registry.counter({
      name: "apiserver_request_total",
      help: "Counter of apiserver requests broken out for each verb, dry run value, group, " +
        "version, resource, scope, component, and HTTP response code.",
      stability: "STABLE",
      labels: ["verb", "dry_run", ...labels.slice(1), "code"],
    });
    this.#duration = registry.histogram({
      name: "apiserver_request_duration_seconds",
      help: "Response latency distribution in seconds for each verb, dry run value, group, " +
        "version, resource, subresource, scope and component.",
      stability: "STABLE",
      labels: ["verb", "dry_run", ...labels.slice(1)],
      buckets: REQUEST_DURATION_BUCKETS,
    });
    this.#sizes = registry.histogram({
      name: "apiserver_response_sizes",
      help: "Response size distribution in bytes for each group, version, verb, resource, " +
        "subresource, scope and component.",
      stability: "STABLE",
      labels,
      buckets: RESPONSE_SIZE_BUCKETS,
    });
  }

  /** The series of requests with these labels, for callers that keep it (the request
   * recorder keeps one per served resource's labels): recording into it is no lookup. */
  series(l: RequestLabels): RequestSeries {
    // Nested maps, one level per label: short strings hash fast, and no key is built (joining
    // eight labels into one string costs more than the eight lookups).
    let m: Map<string, unknown> = this.#series;
    for (const v of [l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope]) {
      let next = m.get(v) as Map<string, unknown> | undefined;
      if (!next) m.set(v, next = new Map());
      m = next;
    }
    let s = m.get(l.component) as Series | undefined;
    if (!s) {
      const labels = [
        l.verb,
        l.dryRun,
        l.group,
        l.version,
        l.resource,
        l.subresource,
        l.scope,
        l.component,
      ];
      s = {
        duration: this.#duration.child(...labels),
        byCode: new Map(),
        labels,
      };
      m.set(l.component, s);
    }
    return s;
  }

  /** One finished request of series `s` (from {@link series}): its answer's code, how long it
   * took and, when known, its size. */
  recordIn(s: RequestSeries, code: number, seconds: number, bytes: number | undefined): void {
    const series = s as Series;
    let total = series.byCode.get(code);
    if (!total) {
      series.byCode.set(code, total = this.#total.child(...series.labels, String(code)));
    }
    total.inc();
    this.count++;
    series.duration.observe(seconds);
    if (bytes !== undefined) {
      (series.sizes ??= this.#sizes.child(series.labels[0], ...series.labels.slice(2)))
        .observe(bytes);
    }
  }
}
