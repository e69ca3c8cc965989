/**
 * Each thread's requests and V8 heap with `--workers`: the counter
 * `platform_thread_requests_total{thread}` (how the kernel spread connections over the threads)
 * and the gauge `platform_thread_heap_used_bytes{thread}`
 * in the thread's own metrics (`main`, or `worker-N`), and in a worker thread the periodic
 * report to the main thread, which bounds it (`--worker-max-heap-mb`, workers.ts). Kube has
 * no per-thread figure to reuse (Go's `go_memstats_*` are the process's); `deno_heap_used_bytes`
 * is the same figure without the label.
 */

import type { ServerMetrics } from "../../metrics/mod.ts";

/** The V8 heap in use by this thread (an isolate's own; `rss` would be the process's). */
export function heapUsed(): number {
  return Deno.memoryUsage().heapUsed;
}

/** Registers this thread's request counter and heap gauge, labelled `thread`. */
export function registerThreadMetrics(metrics: ServerMetrics | undefined, thread: string): void {
  if (!metrics) return;
  metrics.registry.collected("counter", {
    name: "platform_thread_requests_total",
    help: "Requests served by one thread of --workers (main, or worker-N), as counted in " +
      "apiserver_request_total.",
    labels: ["thread"],
  }, (emit) => emit(metrics.requests.count, thread));
  metrics.registry.collected("gauge", {
    name: "platform_thread_heap_used_bytes",
    help: "Bytes of the V8 heap in use by one thread of --workers (main, or worker-N); each " +
      "thread reports its own.",
    labels: ["thread"],
  }, (emit) => emit(heapUsed(), thread));
}

/** Calls `report` with the heap now, then every `intervalMs`; returns the stop. */
export function reportHeap(
  intervalMs: number,
  report: (usedBytes: number, atStart: boolean) => void,
): () => void {
  report(heapUsed(), true);
  const timer = setInterval(() => report(heapUsed(), false), intervalMs);
  return () => clearInterval(timer);
}
