/**
 * `kubectl get -w` and a server restart, with the real kubectl. kubectl does not re-establish a
 * watch the server ends (kube-apiserver ends them on shutdown too): it exits 0. What must hold
 * across the restart is the history: a watch resumed from the last resourceVersion kubectl
 * printed gets exactly the changes made since, in order, from the journal; and a new
 * `kubectl get -w` works at once.
 */

import { assert, assertEquals } from "./assert.ts";
import { kubectlFor, kubectlInstalled, liveOutput } from "./kubectl.ts";
import { freePort, ROOT_CA_CONFIGMAP } from "./harness.ts";
import { type ServerHandle, startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";

interface WatchLine {
  type: string;
  object: { metadata: { name: string; resourceVersion: string } };
}

/** kubectl's `-o json --output-watch-events` lines (one event per line), as events; those of
 * the namespace's kube-root-ca.crt left out (the test follows its own configmaps). */
const events = (lines: string[]): WatchLine[] =>
  lines.filter((l) => l.trim() !== "").map((l) => JSON.parse(l)).filter((e: WatchLine) =>
    e.object.metadata.name !== ROOT_CA_CONFIGMAP
  );
const summary = (list: WatchLine[]) => list.map((e) => `${e.type} ${e.object.metadata.name}`);

Deno.test({
  name: "kubectl get -w across a server restart: clean end, exact resume, new watch",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-kubectl-restart-" });
  const port = freePort();
  const start = () =>
    startServer({ dataDir, storage: "file", securePort: port, logger: silentLogger });
  let server: ServerHandle = await start();
  await using kc = await kubectlFor(server);
  try {
    await kc.ok(["create", "namespace", "w"]);
    await kc.ok(["create", "configmap", "a", "-n", "w", "--from-literal=k=1"]);

    const before = liveOutput(
      kc.spawn(["get", "configmaps", "-n", "w", "-w", "-o", "json", "--output-watch-events"]),
    );
    await kc.ok(["create", "configmap", "b", "-n", "w"]);
    await before.until((l) => events(l).length >= 2, "a listed and b added");
    const seen = events(before.lines);
    assertEquals(summary(seen), ["ADDED a", "ADDED b"]);
    const lastSeen = seen[1].object.metadata.resourceVersion;

    await server.close();
    const ended = await Promise.race([
      before.status,
      new Promise<null>((r) => setTimeout(() => r(null), 15_000)),
    ]);
    assert(ended !== null, "kubectl get -w still runs 15 s after the server stopped");
    assertEquals(
      ended.code,
      0,
      `kubectl get -w failed when the server stopped: ${before.stderr()}`,
    );
    assertEquals(before.stderr(), "");

    server = await start();
    await kc.ok(["create", "configmap", "c", "-n", "w"]);
    await kc.ok(["label", "configmap", "a", "-n", "w", "changed=yes"]);
    await kc.ok(["delete", "configmap", "b", "-n", "w"]);

    // Resumed from the last version kubectl printed before the restart: exactly what it missed.
    const resumed = await kc.ok([
      "get",
      "--raw",
      `/api/v1/namespaces/w/configmaps?watch=1&resourceVersion=${lastSeen}&timeoutSeconds=2`,
    ]);
    const missed = events(resumed.split("\n"));
    assertEquals(summary(missed), ["ADDED c", "MODIFIED a", "DELETED b"]);
    const versions = missed.map((e) => BigInt(e.object.metadata.resourceVersion));
    assert(
      versions.every((v, i) => v > (i === 0 ? BigInt(lastSeen) : versions[i - 1])),
      `resourceVersions not strictly increasing after ${lastSeen}: ${versions.join(", ")}`,
    );

    // A new kubectl get -w lists the current state, then follows.
    await using after = liveOutput(kc.spawn(["get", "configmaps", "-n", "w", "-w", "-o", "name"]));
    const own = (l: string[]) => l.filter((n) => n !== `configmap/${ROOT_CA_CONFIGMAP}`);
    await after.until((l) => own(l).length >= 2, "a and c listed");
    await kc.ok(["create", "configmap", "d", "-n", "w"]);
    await after.until((l) => own(l).length >= 3, "d added");
    assertEquals(own(after.lines), ["configmap/a", "configmap/c", "configmap/d"]);
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
