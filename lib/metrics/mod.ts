/** The public surface of lib/metrics/ (lib/README.md). */
export {
  AUTHENTICATION_DURATION_BUCKETS,
  exponentialBuckets,
  REQUEST_DURATION_BUCKETS,
  RESPONSE_SIZE_BUCKETS,
  WEBHOOK_DURATION_BUCKETS,
} from "./buckets.ts";
export {
  Counter,
  CounterChild,
  Gauge,
  GaugeChild,
  Histogram,
  HistogramChild,
  type HistogramOptions,
  type MetricOptions,
  type MetricType,
  type StabilityLevel,
} from "./metric.ts";
export {
  type ChildSamples,
  exposeFamilies,
  type FamilySamples,
  familySamples,
  mergeFamilies,
} from "./merge.ts";
export {
  type MetricDescriptor,
  MetricsRegistry,
  type RegistryOptions,
  showHiddenMetricsProblem,
} from "./registry.ts";
export { type RequestLabels, RequestMetrics, type RequestSeries } from "./request_metrics.ts";
export { type BuildInfo, type ScrapeSources, ServerMetrics } from "./server_metrics.ts";
export { escapeLabelValue, formatValue, TEXT_FORMAT_CONTENT_TYPE } from "./text_format.ts";
