/**
 * Counters, gauges and histograms with labels. A metric holds one child per set of label
 * values, found by the values joined into one key: recording is a map lookup and an addition.
 * Callers on hot paths keep the child they use (`child(...)` once, `inc()` many times).
 *
 * A metric that records nothing (hidden, or of a registry that is off) hands out one shared
 * child whose methods do nothing.
 */

import { formatValue, labelSet } from "./text_format.ts";

export type StabilityLevel = "ALPHA" | "BETA" | "STABLE";
export type MetricType = "counter" | "gauge" | "histogram";

/** What a metric is declared with. */
export interface MetricOptions {
  /** The full name, e.g. `apiserver_request_total`. */
  name: string;
  help: string;
  /** @default "ALPHA" */
  stability?: StabilityLevel;
  /** Label names, in the order values are given. @default none */
  labels?: readonly string[];
  /** The release that deprecated it, `X.Y.Z` (or `X.Y`). */
  deprecatedVersion?: string;
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, increasing; `+Inf` is implied. */
  buckets: readonly number[];
}

/** A metric as the registry sees it: its declaration and how it writes its samples. */
export interface Collectable {
  readonly type: MetricType;
  readonly options: MetricOptions;
  /** Appends the sample lines (no HELP/TYPE). */
  writeSamples(out: string[]): void;
}

const SEPARATOR = "\u0000";

function keyOf(values: readonly string[]): string {
  return values.length === 1 ? values[0] : values.join(SEPARATOR);
}

abstract class Vec<C> implements Collectable {
  abstract readonly type: MetricType;
  readonly options: MetricOptions;
  readonly labelNames: readonly string[];
  protected readonly children = new Map<string, { values: string[]; child: C }>();
  readonly #recording: boolean;

  constructor(options: MetricOptions, recording: boolean) {
    this.options = options;
    this.labelNames = options.labels ?? [];
    this.#recording = recording;
  }

  protected abstract make(): C;
  protected abstract noop(): C;
  abstract writeSamples(out: string[]): void;

  /** The child for these label values (one per label name, in order). */
  child(...values: string[]): C {
    if (!this.#recording) return this.noop();
    const key = keyOf(values);
    let entry = this.children.get(key);
    if (!entry) {
      if (values.length !== this.labelNames.length) {
        throw new Error(
          `metric ${this.options.name}: ${values.length} label values for ` +
            `${this.labelNames.length} labels`,
        );
      }
      entry = { values, child: this.make() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  /** Every child with its label values, in no order (for merging threads' samples). */
  entries(): { values: string[]; child: C }[] {
    return [...this.children.values()];
  }

  /** Children sorted by their label values, as Prometheus clients write them. */
  protected sorted(): { values: string[]; child: C }[] {
    return [...this.children.entries()].sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
      .map(([, e]) => e);
  }
}

export class CounterChild {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

const NOOP_COUNTER = new (class extends CounterChild {
  override inc(): void {}
})();

export class Counter extends Vec<CounterChild> {
  readonly type = "counter";
  protected make(): CounterChild {
    return new CounterChild();
  }
  protected noop(): CounterChild {
    return NOOP_COUNTER;
  }
  writeSamples(out: string[]): void {
    const name = this.options.name;
    for (const { values, child } of this.sorted()) {
      out.push(`${name}${labelSet(this.labelNames, values)} ${formatValue(child.value)}`);
    }
  }
}

export class GaugeChild {
  value = 0;
  set(v: number): void {
    this.value = v;
  }
  inc(by = 1): void {
    this.value += by;
  }
  dec(by = 1): void {
    this.value -= by;
  }
}

const NOOP_GAUGE = new (class extends GaugeChild {
  override set(): void {}
  override inc(): void {}
  override dec(): void {}
})();

export class Gauge extends Vec<GaugeChild> {
  readonly type = "gauge";
  protected make(): GaugeChild {
    return new GaugeChild();
  }
  protected noop(): GaugeChild {
    return NOOP_GAUGE;
  }
  writeSamples(out: string[]): void {
    const name = this.options.name;
    for (const { values, child } of this.sorted()) {
      out.push(`${name}${labelSet(this.labelNames, values)} ${formatValue(child.value)}`);
    }
  }
}

export class HistogramChild {
  /** Observations per bucket (not cumulative); the last one is `+Inf`. */
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array(bounds.length + 1).fill(0);
  }
  observe(v: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && v > bounds[i]) i++;
    this.counts[i]++;
    this.sum += v;
    this.count++;
  }
}

const NOOP_HISTOGRAM = new (class extends HistogramChild {
  override observe(): void {}
})([]);

export class Histogram extends Vec<HistogramChild> {
  readonly type = "histogram";
  declare readonly options: HistogramOptions;
  readonly #les: string[];

  constructor(options: HistogramOptions, recording: boolean) {
    super(options, recording);
    for (let i = 1; i < options.buckets.length; i++) {
      if (!(options.buckets[i] > options.buckets[i - 1])) {
        throw new Error(`metric ${options.name}: buckets must increase`);
      }
    }
    this.#les = [...options.buckets.map(formatValue), "+Inf"];
  }

  protected make(): HistogramChild {
    return new HistogramChild(this.options.buckets);
  }
  protected noop(): HistogramChild {
    return NOOP_HISTOGRAM;
  }

  writeSamples(out: string[]): void {
    const name = this.options.name;
    const names = [...this.labelNames, "le"];
    for (const { values, child } of this.sorted()) {
      let cumulative = 0;
      for (let i = 0; i < this.#les.length; i++) {
        cumulative += child.counts[i];
        out.push(
          `${name}_bucket${labelSet(names, [...values, this.#les[i]])} ${formatValue(cumulative)}`,
        );
      }
      const labels = labelSet(this.labelNames, values);
      out.push(`${name}_sum${labels} ${formatValue(child.sum)}`);
      out.push(`${name}_count${labels} ${formatValue(child.count)}`);
    }
  }
}

/**
 * A metric whose samples are read when scraped (process figures, object counts): `collect`
 * calls `emit` once per set of label values.
 */
export class CollectedMetric implements Collectable {
  readonly labelNames: readonly string[];
  constructor(
    readonly type: "counter" | "gauge",
    readonly options: MetricOptions,
    readonly collect: (emit: (value: number, ...labelValues: string[]) => void) => void,
  ) {
    this.labelNames = options.labels ?? [];
  }

  writeSamples(out: string[]): void {
    const name = this.options.name;
    const lines: [string, string][] = [];
    this.collect((value, ...values) => {
      const labels = labelSet(this.labelNames, values);
      lines.push([labels, `${name}${labels} ${formatValue(value)}`]);
    });
    lines.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    for (const [, line] of lines) out.push(line);
  }
}
