/**
 * Process and runtime metrics, read when scraped: the names of Prometheus' process collector
 * (`process_cpu_seconds_total`, …) from `/proc/self` (Linux), and the V8 heap in place of
 * Go's runtime figures. Where `/proc` cannot be read, those samples are left out.
 */

import type { MetricsRegistry } from "./registry.ts";

/** Clock ticks per second of `/proc/self/stat` times (Linux's USER_HZ, 100 everywhere). */
const USER_HZ = 100;

/** Fields of `/proc/self/stat` after the command name, or undefined. */
function procStat(): string[] | undefined {
  try {
    const text = Deno.readTextFileSync("/proc/self/stat");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function openFds(): number | undefined {
  try {
    let n = 0;
    for (const _ of Deno.readDirSync("/proc/self/fd")) n++;
    return n;
  } catch {
    return undefined;
  }
}

function maxFds(): number | undefined {
  try {
    const limits = Deno.readTextFileSync("/proc/self/limits");
    const m = /^Max open files\s+(\d+)/m.exec(limits);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function registerProcessMetrics(r: MetricsRegistry): void {
  // The time origin of this process, in seconds since the epoch.
  const start = Math.floor(performance.timeOrigin) / 1000;
  r.collected("gauge", {
    name: "process_start_time_seconds",
    help: "Start time of the process since unix epoch in seconds.",
  }, (emit) => emit(start));
  r.collected("counter", {
    name: "process_cpu_seconds_total",
    help: "Total user and system CPU time spent in seconds.",
  }, (emit) => {
    // utime and stime are the 14th and 15th fields; the slice starts at the 3rd.
    const stat = procStat();
    if (stat) emit((Number(stat[11]) + Number(stat[12])) / USER_HZ);
  });
  r.collected("gauge", {
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
  }, (emit) => emit(Deno.memoryUsage().rss));
  r.collected("gauge", {
    name: "process_virtual_memory_bytes",
    help: "Virtual memory size in bytes.",
  }, (emit) => {
    const stat = procStat();
    if (stat) emit(Number(stat[20]));
  });
  r.collected("gauge", {
    name: "process_open_fds",
    help: "Number of open file descriptors.",
  }, (emit) => {
    const n = openFds();
    if (n !== undefined) emit(n);
  });
  r.collected("gauge", {
    name: "process_max_fds",
    help: "Maximum number of open file descriptors.",
  }, (emit) => {
    const n = maxFds();
    if (n !== undefined) emit(n);
  });
  r.collected("gauge", {
    name: "deno_heap_used_bytes",
    help: "Bytes of the V8 heap in use.",
  }, (emit) => emit(Deno.memoryUsage().heapUsed));
  r.collected("gauge", {
    name: "deno_heap_total_bytes",
    help: "Bytes of the V8 heap reserved.",
  }, (emit) => emit(Deno.memoryUsage().heapTotal));
  r.collected("gauge", {
    name: "deno_external_memory_bytes",
    help: "Bytes of memory held outside the V8 heap by objects it references.",
  }, (emit) => emit(Deno.memoryUsage().external));
  r.gauge({
    name: "deno_info",
    help: "A metric with a constant '1' value labeled by the versions of Deno, V8 and " +
      "TypeScript the server runs on.",
    labels: ["deno_version", "v8_version", "typescript_version"],
  }).child(Deno.version.deno, Deno.version.v8, Deno.version.typescript).set(1);
}
