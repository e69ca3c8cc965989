/**
 * One exposition for several registries of the same declarations: the threads of a server with
 * `--workers`, so that a scrape on any thread answers for the whole server. Each thread takes
 * its samples ({@link familySamples}, plain data that crosses between threads as a structured
 * clone); the scraping thread merges them ({@link mergeFamilies}) and writes the text
 * ({@link exposeFamilies}) as one registry would.
 *
 * Merging adds: counters and histograms (buckets, sum and count) per set of label values, and
 * gauges whose kube meaning is a total (in-flight requests, registered watchers, long-running
 * requests, each thread's V8 heap). Gauges that describe the process or the store, the same
 * from every thread (`process_*`, build and version info, feature gates, stored objects), are
 * taken once, from the first thread given (the one that serves the scrape).
 *
 * @module
 */

import { CollectedMetric, Counter, Gauge, Histogram, type MetricType } from "./metric.ts";
import type { MetricsRegistry } from "./registry.ts";
import { formatValue, labelSet } from "./text_format.ts";

/** One set of label values: a counter's or gauge's value, or a histogram's observations. */
export interface ChildSamples {
  values: string[];
  /** The value; for a histogram, the count of observations. */
  value: number;
  /** A histogram's observations per bucket (not cumulative; the last is `+Inf`). */
  counts?: number[];
  /** A histogram's sum of observations. */
  sum?: number;
}

/** One metric's samples, as one thread holds them. */
export interface FamilySamples {
  name: string;
  type: MetricType;
  helpLine: string;
  typeLine: string;
  labelNames: string[];
  /** A histogram's upper bounds (`+Inf` implied). */
  buckets?: number[];
  children: ChildSamples[];
}

/** Metrics the same on every thread: taken from one, not added. */
const TAKEN_ONCE = new Set([
  "apiserver_storage_objects",
  "deno_info",
  "kubernetes_build_info",
  "kubernetes_feature_enabled",
]);

function takenOnce(name: string): boolean {
  return name.startsWith("process_") || TAKEN_ONCE.has(name);
}

/** The samples of every shown metric that has any. */
export function familySamples(registry: MetricsRegistry): FamilySamples[] {
  const out: FamilySamples[] = [];
  for (const { metric, helpLine, typeLine } of registry.shown()) {
    const children: ChildSamples[] = [];
    if (metric instanceof Histogram) {
      for (const { values, child } of metric.entries()) {
        children.push({ values, value: child.count, counts: [...child.counts], sum: child.sum });
      }
    } else if (metric instanceof Counter || metric instanceof Gauge) {
      for (const { values, child } of metric.entries()) {
        children.push({ values, value: child.value });
      }
    } else if (metric instanceof CollectedMetric) {
      metric.collect((value, ...values) => children.push({ values, value }));
    }
    if (children.length === 0) continue;
    out.push({
      name: metric.options.name,
      type: metric.type,
      helpLine,
      typeLine,
      labelNames: [...(metric.options.labels ?? [])],
      buckets: metric instanceof Histogram ? [...metric.options.buckets] : undefined,
      children,
    });
  }
  return out;
}

/** The threads' samples as one set: see the module comment. `threads[0]` wins where only one
 * thread's value counts. */
export function mergeFamilies(threads: FamilySamples[][]): FamilySamples[] {
  const byName = new Map<string, { family: FamilySamples; children: Map<string, ChildSamples> }>();
  for (const families of threads) {
    for (const f of families) {
      let merged = byName.get(f.name);
      if (!merged) {
        merged = { family: { ...f, children: [] }, children: new Map() };
        byName.set(f.name, merged);
      }
      const once = takenOnce(f.name);
      for (const c of f.children) {
        const key = c.values.join("\u0000");
        const have = merged.children.get(key);
        if (!have) {
          merged.children.set(key, { ...c, counts: c.counts && [...c.counts] });
        } else if (!once) {
          have.value += c.value;
          if (have.sum !== undefined) have.sum += c.sum ?? 0;
          if (have.counts && c.counts) c.counts.forEach((n, i) => have.counts![i] += n);
        }
      }
    }
  }
  return [...byName.keys()].sort().map((name) => {
    const { family, children } = byName.get(name)!;
    const sorted = [...children.entries()].sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    return { ...family, children: sorted.map(([, c]) => c) };
  });
}

/** The text exposition of the families, by name, as `MetricsRegistry.expose` writes it. */
export function exposeFamilies(families: FamilySamples[]): string {
  const out: string[] = [];
  for (const f of [...families].sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (f.children.length === 0) continue;
    out.push(f.helpLine, f.typeLine);
    if (f.type !== "histogram") {
      for (const c of f.children) {
        out.push(`${f.name}${labelSet(f.labelNames, c.values)} ${formatValue(c.value)}`);
      }
      continue;
    }
    const les = [...f.buckets!.map(formatValue), "+Inf"];
    const names = [...f.labelNames, "le"];
    for (const c of f.children) {
      let cumulative = 0;
      les.forEach((le, i) => {
        cumulative += c.counts![i];
        out.push(
          `${f.name}_bucket${labelSet(names, [...c.values, le])} ${formatValue(cumulative)}`,
        );
      });
      const labels = labelSet(f.labelNames, c.values);
      out.push(`${f.name}_sum${labels} ${formatValue(c.sum!)}`);
      out.push(`${f.name}_count${labels} ${formatValue(c.value)}`);
    }
  }
  return out.length ? out.join("\n") + "\n" : "";
}
