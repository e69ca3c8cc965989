// deno-lint-ignore-file no-explicit-any
/**
 * `--audit-log-path` with `--workers`: every thread's events go to the one log the main thread
 * writes. Many requests over many connections (the kernel spreads them over the threads): once
 * the server has closed, the log holds each request's events exactly once, under the
 * `Audit-ID` its answer carried, whole lines only; in each mode. blocking-strict fails a
 * request whose first event cannot be written, whichever thread serves it; blocking does not.
 * The one log rotates by size as with one thread, no event lost or doubled across files.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { testServer } from "./harness.ts";
import { type Endpoint, onNewConnection as onConnection } from "./threads.ts";

const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/readyz", "/livez*"]
  - level: RequestResponse
    resources: [{ group: "", resources: [configmaps] }]
  - level: Metadata
`;

/** One request on a connection of its own; resolves to the answer's status and Audit-ID. */
async function onNewConnection(
  server: Endpoint,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; auditID: string }> {
  const res = await onConnection(server, method, path, body);
  return { status: res.status, auditID: res.headers.get("Audit-ID") ?? "" };
}

async function withPolicy<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-audit-" });
  try {
    await Deno.writeTextFile(`${dir}/policy.yaml`, POLICY);
    return await run(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (
  const [workers, mode] of [
    [2, "blocking"],
    [2, "batch"],
    [4, "blocking"],
    [4, "batch"],
  ] as const
) {
  Deno.test(`--workers=${workers} --audit-log-mode=${mode}: one log, every request's events exactly once`, () =>
    withPolicy(async (dir) => {
      const log = `${dir}/audit.log`;
      const ts = await testServer({
        workers,
        audit: { policyFile: `${dir}/policy.yaml`, logPath: log, logMode: mode },
      });
      // 8 clients at once, each making 16 requests on connections of their own.
      const answers: { status: number; auditID: string; verb: string }[] = [];
      try {
        await Promise.all(Array.from({ length: 8 }, async (_, c) => {
          for (let i = 0; i < 8; i++) {
            const name = `c${c}-${i}`;
            const created = await onNewConnection(ts.server, "POST", CONFIGMAPS, {
              metadata: { name },
              data: { i: String(i) },
            });
            assertEquals(created.status, 201);
            answers.push({ ...created, verb: "create" });
            const got = await onNewConnection(ts.server, "GET", `${CONFIGMAPS}/${name}`);
            assertEquals(got.status, 200);
            answers.push({ ...got, verb: "get" });
          }
        }));
      } finally {
        // Closing stops the workers (their events handed over) before the log closes.
        await ts[Symbol.asyncDispose]();
      }
      const text = await Deno.readTextFile(log);
      assert(text.endsWith("\n"), "the log ends with a whole line");
      const events = text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
      const byID = Map.groupBy(events, (e: any) => e.auditID as string);
      assertEquals(answers.length, 128);
      for (const a of answers) {
        assertMatch(a.auditID, UUID);
        const own = byID.get(a.auditID) ?? [];
        assertEquals(
          own.map((e: any) => [e.verb, e.stage]),
          [[a.verb, "RequestReceived"], [a.verb, "ResponseComplete"]],
          `events of ${a.auditID}`,
        );
        assertEquals(own[1].responseStatus.code, a.verb === "create" ? 201 : 200);
      }
      // Nothing else on configmaps, nothing twice.
      const configmapEvents = events.filter((e) => e.objectRef?.resource === "configmaps");
      assertEquals(configmapEvents.length, 256);
      assertEquals(new Set(events.map((e) => `${e.auditID}/${e.stage}`)).size, events.length);
    }));
}

Deno.test("--workers=2: blocking-strict fails requests whose event cannot be written, on every thread", () =>
  withPolicy(async (dir) => {
    for (const [mode, status] of [["blocking-strict", 500], ["blocking", 200]] as const) {
      await using ts = await testServer({
        workers: 2,
        audit: { policyFile: `${dir}/policy.yaml`, logPath: "/dev/full", logMode: mode },
      });
      for (let i = 0; i < 12; i++) {
        const res = await onNewConnection(ts.server, "GET", CONFIGMAPS);
        assertEquals(res.status, status, `${mode}, request ${i}`);
        assertMatch(res.auditID, UUID);
      }
    }
  }));

Deno.test("--workers=2: the one log rotates past --audit-log-maxsize with every thread's events", () =>
  withPolicy(async (dir) => {
    const log = `${dir}/audit.log`;
    const ts = await testServer({
      workers: 2,
      audit: { policyFile: `${dir}/policy.yaml`, logPath: log, logMaxSizeMB: 1 },
    });
    const big = "x".repeat(200 * 1024);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        const res = await onNewConnection(ts.server, "POST", CONFIGMAPS, {
          metadata: { name: `big-${i}` },
          data: { big },
        });
        assertEquals(res.status, 201);
        ids.push(res.auditID);
      }
    } finally {
      await ts[Symbol.asyncDispose]();
    }
    const files = [...Deno.readDirSync(dir)].map((e) => e.name)
      .filter((n) => n === "audit.log" || /^audit-.*\.log$/.test(n))
      .sort(); // oldest backup first, the current log ("audit.log") last
    assert(files.length > 2, `no rotation: ${files}`);
    const events: any[] = [];
    for (const f of files) {
      assert((await Deno.stat(`${dir}/${f}`)).size <= 1024 * 1024, `${f} is over the limit`);
      const text = await Deno.readTextFile(`${dir}/${f}`);
      events.push(...text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)));
    }
    for (const id of ids) {
      assertEquals(
        events.filter((e) => e.auditID === id).map((e) => e.stage),
        ["RequestReceived", "ResponseComplete"],
      );
    }
  }));
