/**
 * A server's metrics registry: the metrics it declares and the text `/metrics` serves. One per
 * server (tests start many servers in one process), never a global.
 *
 * Stability and deprecation follow kube's metrics framework (spec 01, deprecation rules 11a
 * and 11b): HELP text starts with the stability level (`[STABLE] …`); a metric whose
 * deprecated version the server has reached adds `(Deprecated since X.Y.Z)` and is logged at
 * registration; one deprecated 3 minor versions before the server's is hidden (it records and
 * shows nothing) unless `--show-hidden-metrics-for-version` names the previous minor version.
 */

import type { Logger } from "../api/mod.ts";
import {
  type Collectable,
  CollectedMetric,
  Counter,
  Gauge,
  Histogram,
  type HistogramOptions,
  type MetricOptions,
  type MetricType,
  type StabilityLevel,
} from "./metric.ts";
import { escapeHelp } from "./text_format.ts";

export interface RegistryOptions {
  /** The server's Kubernetes version, `major.minor` (what `/version` reports). */
  version: string;
  /** `--show-hidden-metrics-for-version`: the previous minor version, or absent. */
  showHiddenMetricsForVersion?: string;
  /** Where deprecated metrics are reported at registration. */
  logger?: Pick<Logger, "warn">;
  /** False: metrics record nothing and `/metrics` is empty (the bench's "metrics off").
   * @default true */
  enabled?: boolean;
}

/** One declared metric, as the stable-metrics fixture lists them. */
export interface MetricDescriptor {
  name: string;
  type: MetricType;
  stability: StabilityLevel;
  labels: readonly string[];
  deprecatedVersion?: string;
  /** Hidden: deprecated long enough ago, and not shown again by the flag. */
  hidden: boolean;
}

interface Entry {
  metric: Collectable;
  helpLine: string;
  typeLine: string;
  descriptor: MetricDescriptor;
}

/** `X.Y[.Z]` as numbers, or undefined. */
function parseVersion(v: string): { major: number; minor: number } | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(v.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

/**
 * Checks `--show-hidden-metrics-for-version` against the server's version: only the previous
 * minor version is allowed, as kube allows. Returns the problem, or undefined.
 */
export function showHiddenMetricsProblem(current: string, value: string): string | undefined {
  const cur = parseVersion(current);
  if (!cur) throw new Error(`bad server version ${current}`);
  const previous = `${cur.major}.${cur.minor - 1}`;
  const given = parseVersion(value);
  if (given && given.major === cur.major && given.minor === cur.minor - 1) return undefined;
  return `must be omitted or the previous minor version "${previous}" ` +
    `(only it may show hidden metrics), got ${JSON.stringify(value)}`;
}

export class MetricsRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #current: { major: number; minor: number };
  readonly #showHidden: boolean;
  readonly #logger?: Pick<Logger, "warn">;
  readonly enabled: boolean;

  constructor(options: RegistryOptions) {
    const current = parseVersion(options.version);
    if (!current) throw new Error(`metrics: bad server version ${options.version}`);
    this.#current = current;
    const show = options.showHiddenMetricsForVersion;
    if (show !== undefined && show !== "") {
      const problem = showHiddenMetricsProblem(options.version, show);
      if (problem) throw new Error(`--show-hidden-metrics-for-version: ${problem}`);
      this.#showHidden = true;
    } else {
      this.#showHidden = false;
    }
    this.#logger = options.logger;
    this.enabled = options.enabled ?? true;
  }

  counter(options: MetricOptions): Counter {
    const recording = this.#admit("counter", options);
    return this.#add(new Counter(options, recording), recording);
  }

  gauge(options: MetricOptions): Gauge {
    const recording = this.#admit("gauge", options);
    return this.#add(new Gauge(options, recording), recording);
  }

  histogram(options: HistogramOptions): Histogram {
    const recording = this.#admit("histogram", options);
    return this.#add(new Histogram(options, recording), recording);
  }

  /** A metric read at each scrape (see {@link CollectedMetric}). */
  collected(
    type: "counter" | "gauge",
    options: MetricOptions,
    collect: CollectedMetric["collect"],
  ): void {
    const recording = this.#admit(type, options);
    this.#add(new CollectedMetric(type, options, collect), recording);
  }

  /** Every declared metric, hidden ones included, by name. */
  descriptors(): MetricDescriptor[] {
    return [...this.#entries.values()].map((e) => e.descriptor)
      .sort((a, b) => a.name < b.name ? -1 : 1);
  }

  /** The text exposition of every shown metric with samples, by name. */
  expose(): string {
    if (!this.enabled) return "";
    const out: string[] = [];
    const names = [...this.#entries.keys()].sort();
    for (const name of names) {
      const e = this.#entries.get(name)!;
      if (e.descriptor.hidden) continue;
      const at = out.length;
      out.push(e.helpLine, e.typeLine);
      const before = out.length;
      e.metric.writeSamples(out);
      // As Prometheus' clients: a metric without samples is not listed.
      if (out.length === before) out.length = at;
    }
    return out.length ? out.join("\n") + "\n" : "";
  }

  /** Every shown metric (none when the registry is off), with its HELP and TYPE lines. */
  shown(): { metric: Collectable; helpLine: string; typeLine: string }[] {
    if (!this.enabled) return [];
    return [...this.#entries.values()].filter((e) => !e.descriptor.hidden);
  }

  /** Registers the declaration; whether the metric records (shown and the registry on). */
  #admit(type: MetricType, options: MetricOptions): boolean {
    if (this.#entries.has(options.name)) {
      throw new Error(`metric ${options.name} is already registered`);
    }
    const deprecated = options.deprecatedVersion
      ? parseVersion(options.deprecatedVersion)
      : undefined;
    if (options.deprecatedVersion && !deprecated) {
      throw new Error(`metric ${options.name}: bad deprecated version`);
    }
    const cur = this.#current;
    const isDeprecated = deprecated !== undefined &&
      (deprecated.major < cur.major ||
        deprecated.major === cur.major && deprecated.minor <= cur.minor);
    const hidden = isDeprecated && !this.#showHidden &&
      (deprecated.major < cur.major || deprecated.minor <= cur.minor - 3);
    const stability = options.stability ?? "ALPHA";
    let help = options.help;
    if (isDeprecated) {
      help = `(Deprecated since ${normalized(options.deprecatedVersion!)}) ${help}`;
      if (this.enabled) {
        this.#logger?.warn(
          `metrics: ${options.name} is deprecated since ${normalized(options.deprecatedVersion!)}${
            hidden ? " and hidden (--show-hidden-metrics-for-version shows it)" : ""
          }`,
        );
      }
    }
    this.#entries.set(options.name, {
      metric: undefined as unknown as Collectable, // set by #add
      helpLine: `# HELP ${options.name} [${stability}] ${escapeHelp(help)}`,
      typeLine: `# TYPE ${options.name} ${type}`,
      descriptor: {
        name: options.name,
        type,
        stability,
        labels: options.labels ?? [],
        deprecatedVersion: options.deprecatedVersion,
        hidden,
      },
    });
    return this.enabled && !hidden;
  }

  #add<M extends Collectable>(metric: M, recording: boolean): M {
    this.#entries.get(metric.options.name)!.metric = metric;
    // An unlabelled counter or gauge has its one sample from the start, as in kube.
    const labelled = (metric.options.labels ?? []).length > 0;
    if (recording && !labelled && (metric instanceof Counter || metric instanceof Gauge)) {
      metric.child();
    }
    return metric;
  }
}

/** `1.30` as `1.30.0`, as kube writes deprecated versions. */
function normalized(v: string): string {
  const t = v.trim().replace(/^v/, "");
  return t.split(".").length === 2 ? `${t}.0` : t;
}
