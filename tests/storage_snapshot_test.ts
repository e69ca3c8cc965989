// deno-lint-ignore-file no-explicit-any
/**
 * Backups of a running file-store server as a user takes them: `platform storage snapshot`
 * while 16 clients write, `platform storage restore` into a new data directory, and a server
 * started on it serves exactly the writes acknowledged at or before the snapshot's revision.
 * Also: who may take a snapshot, scheduled snapshots with retention, refusals of a non-empty
 * target and of truncated or corrupt snapshot files.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  assertConfigError,
  createAsAdmin,
  ownConfigMaps,
  testServer,
  tokenFile,
} from "./harness.ts";
import { runWithin } from "./storage_testdata.ts";
import { createLogger, silentLogger } from "../lib/api/log.ts";
import { readSnapshotFile } from "../lib/storage/mod.ts";

const NS = "load";
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const WRITERS = 16;

interface Ack {
  rv: number;
  data: Record<string, string>;
}

Deno.test("a snapshot taken under load restores every write acknowledged up to its revision, none after", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-snapshot-" });
  try {
    const acks = new Map<string, Ack[]>();
    let revision = 0;
    const snapshot = `${dir}/under-load.snap`;
    {
      await using ts = await testServer({ storage: "file", dataDir: `${dir}/data` });
      await createAsAdmin(ts, "/api/v1/namespaces", { metadata: { name: NS } });
      let snapshotDone = false;
      const writer = async (w: number) => {
        let after = 0;
        for (let n = 0; after < 10 && n < 5_000; n++) {
          if (snapshotDone) after++;
          const name = `w${w}-${Math.floor(n / 2)}`;
          const data = { writer: String(w), n: String(n) };
          const res = n % 2 === 0
            ? await ts.json("POST", CM, { body: { metadata: { name }, data } })
            : await ts.json("PUT", `${CM}/${name}`, { body: { metadata: { name }, data } });
          assert(res.status === 201 || res.status === 200, `${name}: ${res.status}`);
          const list = acks.get(name) ?? [];
          list.push({ rv: Number(res.body.metadata.resourceVersion), data });
          acks.set(name, list);
          if (n === 20) started.push(w);
        }
      };
      const started: number[] = [];
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      // Every writer is well under way before the snapshot, and goes on after it.
      while (started.length < WRITERS) await new Promise((r) => setTimeout(r, 10));
      const run = await runWithin(
        60_000,
        "storage",
        "snapshot",
        "--kubeconfig",
        ts.server.kubeconfigPath!,
        "--output",
        snapshot,
      );
      snapshotDone = true;
      assertEquals(run.code, 0, run.stderr);
      const m = /^snapshot of revision (\d+) \((\d+) keys\) written to /.exec(run.stdout);
      assert(m, run.stdout);
      revision = Number(m[1]);
      await Promise.all(writers);
    }
    assertEquals((await Deno.stat(snapshot)).mode! & 0o777, 0o600);
    assertEquals((await readSnapshotFile(snapshot)).revision, revision);

    // The writes fall on both sides of the snapshot's revision.
    const all = [...acks.values()].flat();
    assert(all.some((a) => a.rv <= revision) && all.some((a) => a.rv > revision));

    const restore = await runWithin(
      60_000,
      "storage",
      "restore",
      "--snapshot",
      snapshot,
      "--data-dir",
      `${dir}/restored`,
    );
    assertEquals(restore.code, 0, restore.stderr);
    assertMatch(restore.stdout, new RegExp(`restored revision ${revision} `));

    await using restored = await testServer({ storage: "file", dataDir: `${dir}/restored` });
    const list = await restored.json("GET", CM);
    assertEquals(list.status, 200);
    const got = new Map<string, Ack>(
      ownConfigMaps(list.body.items as any[]).map((i) => [
        i.metadata.name,
        { rv: Number(i.metadata.resourceVersion), data: i.data },
      ]),
    );
    const expected = new Map<string, Ack>();
    for (const [name, writes] of acks) {
      const before = writes.filter((a) => a.rv <= revision).at(-1);
      if (before) expected.set(name, before);
    }
    assertEquals(got.size, expected.size, "objects restored");
    for (const [name, want] of expected) assertEquals(got.get(name), want, name);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the snapshot endpoint is for system:masters and whom RBAC grants it", async () => {
  await using tokens = await tokenFile({ "bob-token": { name: "bob" } });
  await using ts = await testServer({ tokenAuthFile: tokens.path });
  assertEquals((await ts.request("GET", "/storage/snapshot", { token: null })).status, 401);
  const denied = await ts.request("GET", "/storage/snapshot", { token: "bob-token" });
  await denied.body?.cancel();
  assertEquals(denied.status, 403);
  await createAsAdmin(ts, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    metadata: { name: "snapshot-taker" },
    rules: [{ nonResourceURLs: ["/storage/snapshot"], verbs: ["get"] }],
  });
  await createAsAdmin(ts, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    metadata: { name: "bob-takes-snapshots" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "snapshot-taker" },
    subjects: [{ kind: "User", name: "bob", apiGroup: "rbac.authorization.k8s.io" }],
  });
  const allowed = await ts.request("GET", "/storage/snapshot", { token: "bob-token" });
  assertEquals(allowed.status, 200);
  const text = await allowed.text();
  assertMatch(text.split("\n")[0], /"format":"platform-snapshot","version":1/);
  const put = await ts.request("PUT", "/storage/snapshot", { body: "{}" });
  await put.body?.cancel();
  assertEquals(put.status, 405);
});

Deno.test("scheduled snapshots keep the newest --snapshot-retention files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-snapshot-" });
  try {
    const written: string[] = [];
    const logger = createLogger("info", (line) => {
      const m = / snapshot: revision \d+ \(\d+ keys\) written to (\S+)$/.exec(line);
      if (m) written.push(m[1]);
    });
    {
      await using ts = await testServer({
        storage: "file",
        dataDir: `${dir}/data`,
        snapshotIntervalMs: 100,
        snapshotRetention: 2,
        logger,
      });
      await createAsAdmin(ts, "/api/v1/namespaces/default/configmaps", {
        metadata: { name: "kept" },
      });
      // A round is skipped while nothing changed: keep writing until five were taken.
      const deadline = Date.now() + 30_000;
      for (let i = 0; written.length < 5 && Date.now() < deadline; i++) {
        await createAsAdmin(ts, "/api/v1/namespaces/default/configmaps", {
          metadata: { name: `change-${i}` },
        });
        await new Promise((r) => setTimeout(r, 50));
      }
      assert(written.length >= 5, `rounds: ${written.length}`);
    }
    const files = [...Deno.readDirSync(`${dir}/data/snapshots`)].map((e) => e.name).sort();
    assertEquals(files.map((f) => `${dir}/data/snapshots/${f}`), written.slice(-2));
    assertEquals(Deno.statSync(`${dir}/data/snapshots`).mode! & 0o777, 0o700);
    for (const f of files) {
      assertEquals(Deno.statSync(`${dir}/data/snapshots/${f}`).mode! & 0o777, 0o600);
      const keys: string[] = [];
      await readSnapshotFile(`${dir}/data/snapshots/${f}`, (kv) => keys.push(kv.key));
      assert(keys.includes("/registry/core/configmaps/default/kept"), f);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("restore refuses a non-empty data dir without --force and a damaged snapshot always", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-snapshot-" });
  try {
    let kubeconfig: string;
    {
      await using ts = await testServer({
        storage: "file",
        dataDir: `${dir}/data`,
        logger: silentLogger,
      });
      await createAsAdmin(ts, "/api/v1/namespaces/default/configmaps", {
        metadata: { name: "before" },
      });
      kubeconfig = ts.server.kubeconfigPath!;
      const run = await runWithin(
        60_000,
        "storage",
        "snapshot",
        "--kubeconfig",
        kubeconfig,
        "--output",
        `${dir}/good.snap`,
      );
      assertEquals(run.code, 0, run.stderr);
      // A running server's data dir is refused even with --force.
      const busy = await runWithin(
        60_000,
        "storage",
        "restore",
        "--snapshot",
        `${dir}/good.snap`,
        "--data-dir",
        `${dir}/data`,
        "--force",
      );
      assertConfigError(busy, /--data-dir: .* is in use by a running server/);
      await createAsAdmin(ts, "/api/v1/namespaces/default/configmaps", {
        metadata: { name: "after" },
      });
    }
    const restore = (target: string, snapshot: string, ...more: string[]) =>
      runWithin(
        60_000,
        "storage",
        "restore",
        "--snapshot",
        snapshot,
        "--data-dir",
        target,
        ...more,
      );

    assertConfigError(
      await restore(`${dir}/data`, `${dir}/good.snap`),
      /--data-dir: .*store is not empty.*--force/,
    );
    const bytes = await Deno.readFile(`${dir}/good.snap`);
    await Deno.writeFile(`${dir}/truncated.snap`, bytes.slice(0, Math.floor(bytes.length / 2)));
    const text = new TextDecoder().decode(bytes).replace("/default/before", "/default/bef0re");
    await Deno.writeTextFile(`${dir}/corrupt.snap`, text);
    for (const [file, reason] of [["truncated", /truncated/], ["corrupt", /checksum/]] as const) {
      const run = await restore(`${dir}/data`, `${dir}/${file}.snap`, "--force");
      assertConfigError(run, new RegExp(`--snapshot: .*${file}\\.snap: .*${reason.source}`));
      const fresh = await restore(`${dir}/${file}`, `${dir}/${file}.snap`);
      assertConfigError(fresh, reason);
      // Checked before anything is made: no data dir, so no half-restored store.
      assertEquals(await Deno.stat(`${dir}/${file}`).then(() => true, () => false), false);
    }
    assertConfigError(
      await restore(`${dir}/x`, `${dir}/missing.snap`),
      /--snapshot: cannot read .*missing\.snap/,
    );

    // The data dir still holds the store as it was: "after" is there.
    {
      await using ts = await testServer({ storage: "file", dataDir: `${dir}/data` });
      assertEquals(
        (await ts.json("GET", "/api/v1/namespaces/default/configmaps/after")).status,
        200,
      );
    }
    // With --force, a good snapshot replaces it: "after" is gone, "before" is back.
    const forced = await restore(`${dir}/data`, `${dir}/good.snap`, "--force");
    assertEquals(forced.code, 0, forced.stderr);
    await using ts = await testServer({ storage: "file", dataDir: `${dir}/data` });
    assertEquals((await ts.json("GET", "/api/v1/namespaces/default/configmaps/after")).status, 404);
    assertEquals(
      (await ts.json("GET", "/api/v1/namespaces/default/configmaps/before")).status,
      200,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a snapshot keeps encrypted secrets encrypted; the same config reads them after restore", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-snapshot-" });
  try {
    const config = `${dir}/encryption.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        apiVersion: "apiserver.config.k8s.io/v1",
        kind: "EncryptionConfiguration",
        resources: [{
          resources: ["secrets"],
          providers: [{
            aesgcm: { keys: [{ name: "k1", secret: btoa("0123456789abcdef0123456789abcdef") }] },
          }],
        }],
      }),
    );
    const opts = { storage: "file", encryptionProviderConfigFile: config };
    {
      await using ts = await testServer({ ...opts, dataDir: `${dir}/data` });
      await createAsAdmin(ts, "/api/v1/namespaces/default/secrets", {
        metadata: { name: "s" },
        data: { v: btoa("hush") },
      });
      const run = await runWithin(
        60_000,
        "storage",
        "snapshot",
        "--kubeconfig",
        ts.server.kubeconfigPath!,
        "--output",
        `${dir}/s.snap`,
      );
      assertEquals(run.code, 0, run.stderr);
    }
    const text = await Deno.readTextFile(`${dir}/s.snap`);
    const line = text.split("\n").find((l) => l.includes("/secrets/default/s"))!;
    assert(line.includes("k8s:enc:aesgcm:v1:k1:") && !line.includes(btoa("hush")), line);
    const restore = await runWithin(
      60_000,
      "storage",
      "restore",
      "--snapshot",
      `${dir}/s.snap`,
      "--data-dir",
      `${dir}/restored`,
    );
    assertEquals(restore.code, 0, restore.stderr);
    await using ts = await testServer({ ...opts, dataDir: `${dir}/restored` });
    const got = await ts.json("GET", "/api/v1/namespaces/default/secrets/s");
    assertEquals(atob(got.body.data.v), "hush");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
