// deno-lint-ignore-file no-explicit-any
/**
 * `--workers=2` (the real `platform serve`, a child process) and SIGTERM while 16 watches and
 * 16 writers are busy on connections spread over both threads: every thread drains, so every
 * watch ends cleanly (its stream ends; no reset), the process exits 0 before
 * `--shutdown-timeout`, and every write acknowledged is there when the server starts again on
 * the same data directory.
 */

import {
  configMapCreateWebhook,
  startTestWebhook,
} from "../lib/admission/webhook/webhook_testdata.ts";
import { assert, assertEquals } from "./assert.ts";
import { onNewConnection } from "./threads.ts";
import { startPlatform } from "./platform_process.ts";
import { compareStored, CONFIGMAPS, startWriters } from "./workers_writers.ts";

const WATCHES = 16;
const WRITERS = 16;
const PREFIX = "s-w";
const SHUTDOWN_TIMEOUT_S = 60;

/** A watch on a connection of its own: its events, and how its stream ended. */
function watch(
  target: { url: string; caCertPem: string; token: string },
  fromRv: string,
) {
  const events: any[] = [];
  const client = Deno.createHttpClient({ caCerts: [target.caCertPem] });
  const ended = (async (): Promise<"clean" | string> => {
    try {
      const res = await fetch(`${target.url}${CONFIGMAPS}?watch=1&resourceVersion=${fromRv}`, {
        client,
        headers: { Authorization: `Bearer ${target.token}` },
      });
      if (res.status !== 200) return `status ${res.status}`;
      let buf = "";
      for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          events.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
      }
      return buf.trim() === "" ? "clean" : `a partial line: ${buf}`;
    } catch (err) {
      return `error: ${err instanceof Error ? err.message : err}`;
    } finally {
      client.close();
    }
  })();
  return { events, ended };
}

Deno.test("--workers=2: SIGTERM drains every thread; watches end, writes stay", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-shutdown-" });
  try {
    let acked: ReturnType<typeof startWriters>["result"];
    {
      await using server = await startPlatform(`${dir}/data`, [
        "--workers=2",
        `--shutdown-timeout=${SHUTDOWN_TIMEOUT_S}s`,
      ]);
      const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
      const list = await fetch(server.url + CONFIGMAPS, {
        client,
        headers: { Authorization: `Bearer ${server.token}` },
      }).then((r) => r.json());
      client.close();
      const fromRv = list.metadata.resourceVersion;
      // Watches on 16 connections: both threads hold some (2^-15 that one holds all).
      const watches = Array.from({ length: WATCHES }, () => watch(server, fromRv));
      const writers = startWriters(server, WRITERS, PREFIX, { retry: false });
      // Every watch is live (it has an event) and the writers are busy when SIGTERM comes.
      while (
        (watches.some((w) => w.events.length === 0) || writers.result.acked.size < 60) &&
        writers.result.endedBy.length === 0
      ) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assertEquals(writers.result.endedBy, [], "a writer failed before SIGTERM");
      const signalledAt = performance.now();
      const status = await server.stop("SIGTERM");
      const tookS = (performance.now() - signalledAt) / 1000;
      writers.stop();
      await writers.done;
      acked = writers.result;
      assertEquals(status.code, 0, `exit status; log:\n${server.lines.join("\n")}`);
      assert(tookS < SHUTDOWN_TIMEOUT_S, `the shutdown took ${tookS}s`);
      assert(
        server.lines.some((l) => /received SIGTERM: shutting down/.test(l)) &&
          server.lines.some((l) => /\bstopped$/.test(l)),
        server.lines.join("\n"),
      );
      const endings = await Promise.all(watches.map((w) => w.ended));
      assertEquals(endings, endings.map(() => "clean"), "every watch ends cleanly");
      // What each watch saw is what was written, each object once.
      for (const w of watches) {
        const names = w.events.map((e) => e.object.metadata.name);
        assertEquals(new Set(names).size, names.length, "an object added twice");
        assert(w.events.every((e) => e.type === "ADDED"), JSON.stringify(w.events.at(-1)));
      }
    }
    // Started again on the same data: every acknowledged write is there.
    await using again = await startPlatform(`${dir}/data`, ["--workers=1"]);
    const client = Deno.createHttpClient({ caCerts: [again.caCertPem] });
    const items = (await fetch(again.url + CONFIGMAPS, {
      client,
      headers: { Authorization: `Bearer ${again.token}` },
    }).then((r) => r.json())).items;
    client.close();
    assertEquals(compareStored(items, PREFIX, acked), []);
    assert(acked.acked.size >= 60);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--workers=2: the drain of every thread takes one --shutdown-timeout, not one per thread", async () => {
  // Creates that hang in a validating webhook until the test ends, on 16 connections (both
  // threads hold some: 2^-15 that one holds all). Every thread drains at once and gives up
  // on them after the one timeout; draining one thread after the other took two, and the
  // process exited 1 at the timeout + 10 s.
  const timeoutS = 10;
  await using hook = await startTestWebhook();
  const release = Promise.withResolvers<void>();
  let reviews = 0;
  hook.respond = async () => {
    reviews++;
    await release.promise;
    return new Response("{}", { status: 500 });
  };
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-drain-" });
  try {
    await using server = await startPlatform(`${dir}/data`, [
      "--workers=2",
      `--shutdown-timeout=${timeoutS}s`,
    ]);
    const admin = { url: server.url, caCertPem: server.caCertPem, adminToken: server.token };
    const call = (method: string, path: string, body: unknown) =>
      onNewConnection(admin, method, path, body);
    const made = await call(
      "POST",
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        ...configMapCreateWebhook("ValidatingWebhookConfiguration", "hang", hook, {
          timeoutSeconds: 30,
        }),
      },
    );
    assertEquals(made.status, 201, made.text);
    // Each thread sees the configuration through its own copy of the store: wait until the
    // webhook has all 16 creates.
    const hanging = Array.from(
      { length: 16 },
      (_, i) =>
        call("POST", CONFIGMAPS, { metadata: { name: `hang-${i}` } }).catch((e) => ({
          status: 0,
          text: String(e),
        })),
    );
    while (reviews < 16) await new Promise((r) => setTimeout(r, 20));
    const signalledAt = performance.now();
    const status = await server.stop("SIGTERM");
    const tookS = (performance.now() - signalledAt) / 1000;
    release.resolve();
    await Promise.all(hanging);
    assertEquals(status.code, 0, `exit status; log:\n${server.lines.join("\n")}`);
    assert(tookS < timeoutS + 7, `the shutdown took ${tookS.toFixed(1)}s`);
  } finally {
    release.resolve();
    await Deno.remove(dir, { recursive: true });
  }
});
