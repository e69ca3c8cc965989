/** Bucket boundaries of kube's histograms, and how kube's metrics framework makes them. */

/** `count` bounds from `start`, each `factor` times the one before (kube's
 * `ExponentialBuckets`). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

/** `apiserver_request_duration_seconds` and `etcd_request_duration_seconds`. */
export const REQUEST_DURATION_BUCKETS: readonly number[] = [
  0.005,
  0.025,
  0.05,
  0.1,
  0.2,
  0.4,
  0.6,
  0.8,
  1.0,
  1.25,
  1.5,
  2,
  3,
  4,
  5,
  6,
  8,
  10,
  15,
  20,
  30,
  45,
  60,
];

/** `apiserver_response_sizes`: 1 kB to 1 GB. */
export const RESPONSE_SIZE_BUCKETS: readonly number[] = exponentialBuckets(1000, 10, 7);

/** `apiserver_admission_webhook_admission_duration_seconds`. */
export const WEBHOOK_DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

/** `authentication_duration_seconds`: 1 ms to about 16 s. */
export const AUTHENTICATION_DURATION_BUCKETS: readonly number[] = exponentialBuckets(0.001, 2, 15);
