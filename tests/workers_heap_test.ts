// deno-lint-ignore-file no-explicit-any
/**
 * `--workers` memory: each thread's V8 heap is logged when it starts serving and reported as
 * `platform_thread_heap_used_bytes{thread}`; past `--worker-max-heap-mb` (here 1 MiB, which
 * every worker is past) a worker is replaced at its next heap report: a new worker serves
 * first, then the old one drains and ends, while requests on the port keep being answered.
 * The flag itself on the real `platform serve`: its value is checked, and it bounds the
 * workers of that process.
 */

import { createLogger } from "../lib/api/log.ts";
import { assert, assertEquals } from "./assert.ts";
import { assertConfigError, runPlatform, testServer } from "./harness.ts";
import { startPlatform } from "./platform_process.ts";
import { onNewConnection } from "./threads.ts";

Deno.test("--worker-max-heap-mb: a worker past it is replaced, then drained", async () => {
  const lines: string[] = [];
  const count = (re: RegExp) => lines.filter((l) => re.test(l)).length;
  await using ts = await testServer({
    workers: 2,
    workerMaxHeapMB: 1,
    workerHeapCheckIntervalMs: 300,
    logger: createLogger("info", (line) => lines.push(line)),
  });
  const { server } = ts;
  // Reported at start: the main thread's and the worker's heap.
  assert(
    count(/serving on 2 threads \(--workers=2\); main thread V8 heap [\d.]+ MiB/) === 1 &&
      count(/worker 1 serving; V8 heap [\d.]+ MiB/) >= 1,
    lines.join("\n"),
  );
  // Requests keep being answered while worker 1 is replaced twice over. A connection the
  // kernel queued on the old worker's listener in the instant it closes is reset (Linux,
  // unless net.ipv4.tcp_migrate_req=1): sent again, the create is answered.
  let i = 0;
  let resets = 0;
  while (count(/worker 1: the replaced one has drained and ended/) < 2) {
    assert(i < 2000, `worker 1 was not replaced twice:\n${lines.join("\n")}`);
    let made: { status: number; text: string } | undefined;
    for (let attempt = 0; !made; attempt++) {
      try {
        made = await onNewConnection(server, "POST", "/api/v1/namespaces/default/configmaps", {
          metadata: { name: `h${i}` },
        });
      } catch (err) {
        assert(attempt < 3, `h${i}: ${err}`);
        resets++;
      }
    }
    const cutThenApplied = resets > 0 && made.status === 409 && made.text.includes("AlreadyExists");
    assert(made.status === 201 || cutThenApplied, made.text);
    i++;
  }
  assert(
    count(/worker 1: V8 heap [\d.]+ MiB is over --worker-max-heap-mb=1; starting a new worker/) >=
      2,
    lines.join("\n"),
  );
  // The replacement is no crash.
  assertEquals(count(/stopped unexpectedly/), 0, lines.join("\n"));
  // Every create is stored, whichever thread made it.
  const list = await ts.json("GET", "/api/v1/namespaces/default/configmaps");
  const names = new Set(list.body.items.map((o: any) => o.metadata.name));
  for (let j = 0; j < i; j++) assert(names.has(`h${j}`), `h${j} missing`);

  // Each thread reports its own heap: scrapes over new connections show both series.
  const seen = new Set<string>();
  for (let j = 0; j < 64 && seen.size < 2; j++) {
    const metrics = await onNewConnection(server, "GET", "/metrics");
    for (
      const m of metrics.text.matchAll(
        /^platform_thread_heap_used_bytes\{thread="([^"]+)"\} (\S+)/gm,
      )
    ) {
      assert(Number(m[2]) > 1024 * 1024, m[0]);
      seen.add(m[1]);
    }
  }
  assertEquals([...seen].sort(), ["main", "worker-1"]);
});

Deno.test("--worker-max-heap-mb: a value that is not a count exits 2 naming the flag", async () => {
  assertConfigError(
    await runPlatform("serve", "--workers=2", "--worker-max-heap-mb=lots"),
    /--worker-max-heap-mb/,
  );
  assertConfigError(
    await runPlatform("serve", "--workers=2", "--worker-max-heap-mb=-5"),
    /--worker-max-heap-mb/,
  );
});

Deno.test("--worker-max-heap-mb=1 on the command line: worker 1 is replaced at its report", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-heap-" });
  try {
    await using server = await startPlatform(dir, ["--workers=2", "--worker-max-heap-mb=1"]);
    // The first periodic report comes 10 s after the worker serves; 120 s is the limit here.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) =>
      timer = setTimeout(
        () => reject(new Error(`no replacement in 120 s:\n${server.lines.join("\n")}`)),
        120_000,
      )
    );
    try {
      await Promise.race([
        server.waitFor(/worker 1: the replaced one has drained and ended/),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
    assert(
      server.lines.some((l) =>
        /worker 1: V8 heap [\d.]+ MiB is over --worker-max-heap-mb=1; starting a new worker/
          .test(l)
      ),
      server.lines.join("\n"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
