// deno-lint-ignore-file no-explicit-any
/**
 * `--workers=2` (the real `platform serve`, a child process): a worker thread that crashes (an
 * uncaught error, made by the test-only trigger `PLATFORM_TEST_WORKER_CRASH_DIR`,
 * lib/server/start/worker_crash_trigger.ts) while 16 writers create ConfigMaps over their own
 * connections. The crashed worker drains and ends, and another takes its number. What the
 * writers see: a request whose connection is cut meanwhile, sent again on a new connection, is
 * applied exactly once; every acknowledged write is stored with its acknowledged
 * resourceVersion; nothing else is; a watch from before the load sees each object added once;
 * the port serves throughout, and the worker serves again.
 */

import { CRASH_DIR_ENV } from "../lib/server/start/worker_crash_trigger.ts";
import { assert, assertEquals } from "./assert.ts";
import { type PlatformProcess, startPlatform } from "./platform_process.ts";
import { onNewConnection } from "./threads.ts";
import { compareStored, CONFIGMAPS, startWriters } from "./workers_writers.ts";

const WRITERS = 16;
const PREFIX = "r-w";

/** A GET with the admin token on a connection of its own; the body as text. */
async function get(server: PlatformProcess, path: string): Promise<string> {
  const endpoint = { url: server.url, caCertPem: server.caCertPem, adminToken: server.token };
  const res = await onNewConnection(endpoint, "GET", path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
  return res.text;
}

Deno.test("--workers=2: a worker that dies is restarted; its writes are stored once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-restart-" });
  const crashDir = `${dir}/crash`;
  await Deno.mkdir(crashDir);
  try {
    await using server = await startPlatform(`${dir}/data`, ["--workers=2"], {
      [CRASH_DIR_ENV]: crashDir,
    });
    const logged = (re: RegExp) => server.lines.some((l) => re.test(l));
    assert(logged(/worker 1 serving; V8 heap [\d.]+ MiB/), server.lines.join("\n"));
    // Where the watch below starts: before any write of the test.
    const fromRv = JSON.parse(await get(server, CONFIGMAPS)).metadata.resourceVersion;

    const writers = startWriters(
      { url: server.url, caCertPem: server.caCertPem, token: server.token },
      WRITERS,
      PREFIX,
      { retry: true },
    );
    const total = () => writers.result.acked.size + writers.result.appliedWhileCut.size;
    // The crash comes in the middle of the load.
    while (total() < 80 && writers.result.violations.length === 0) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await Deno.writeTextFile(`${crashDir}/crash-worker-1`, "");
    await server.waitFor(/worker 1 serving again/);
    // The load goes on until every writer wrote 5 more after the restart.
    const after = Array.from({ length: WRITERS }, (_, w) => writers.count(w));
    while (
      writers.result.violations.length === 0 &&
      after.some((n, w) => writers.count(w) < n + 5)
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    writers.stop();
    await writers.done;
    const { result } = writers;
    assertEquals(result.violations, [], "every create is answered once it is sent again");
    assert(
      logged(/worker 1: uncaught Error: worker 1: crashing as .*crash-worker-1/) &&
        logged(/worker 1 stopped unexpectedly; starting it again/) &&
        logged(/worker 1: the crashed one has drained and ended/),
      `the crash, the drain and the restart are logged:\n${server.lines.join("\n")}`,
    );

    const list = JSON.parse(await get(server, CONFIGMAPS));
    assertEquals(compareStored(list.items, PREFIX, result), []);
    const stored = list.items.filter((i: any) => i.metadata.name.startsWith(PREFIX)).length;
    assertEquals(stored, result.acked.size + result.appliedWhileCut.size);

    // Each object was added once: no write was applied twice.
    const events = (await get(
      server,
      `${CONFIGMAPS}?watch=1&resourceVersion=${fromRv}&timeoutSeconds=2`,
    )).trim().split("\n").map((l) => JSON.parse(l));
    const ours = events.filter((e) => e.object.metadata.name.startsWith(PREFIX));
    assertEquals(ours.filter((e) => e.type !== "ADDED"), []);
    const names = ours.map((e) => e.object.metadata.name);
    assertEquals(new Set(names).size, names.length, "an object added twice");
    assertEquals(names.length, stored);

    // The restarted worker serves (its own heap gauge shows on some connection).
    let seen = false;
    for (let i = 0; i < 64 && !seen; i++) {
      seen = (await get(server, "/metrics")).includes(
        'platform_thread_heap_used_bytes{thread="worker-1"}',
      );
    }
    assert(seen, "no scrape was served by worker 1 after its restart");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--workers=2: a rejection nothing handled is a crash too: drained, logged, restarted", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-reject-" });
  const crashDir = `${dir}/crash`;
  await Deno.mkdir(crashDir);
  try {
    await using server = await startPlatform(`${dir}/data`, ["--workers=2"], {
      [CRASH_DIR_ENV]: crashDir,
    });
    await Deno.writeTextFile(`${crashDir}/crash-worker-1`, "reject");
    await server.waitFor(/worker 1 serving again/);
    const logged = (re: RegExp) => server.lines.some((l) => re.test(l));
    assert(
      logged(/worker 1: unhandled rejection: Error: worker 1: crashing as/) &&
        logged(/worker 1: the crashed one has drained and ended/),
      server.lines.join("\n"),
    );
    // Still one server: both threads answer.
    JSON.parse(await get(server, CONFIGMAPS));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
