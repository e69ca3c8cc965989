/**
 * The etcd3 backend's watch-fed copy when its watch cannot resume: a server cut off from etcd
 * while another writes and etcd is compacted comes back, reads every key again, ends its
 * clients' watches with 410 Expired (so they list again, as client-go does) and serves the new
 * state; /readyz fails while it is cut off. The cut is a TCP relay in front of etcd that the
 * test closes and reopens.
 */

import { assert, assertEquals } from "./assert.ts";
import { createAsAdmin, freePort, testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";
import {
  etcdInstalled,
  requireEtcdUnderCi,
  startEtcdMember,
} from "../lib/storage/testing/etcd_member.ts";

requireEtcdUnderCi("tests/etcd_watch_cache_test.ts");

const CM = "/api/v1/namespaces/default/configmaps";

/** A TCP relay to `target` on a fixed loopback port that can be cut and restored. */
function relay(target: { hostname: string; port: number }) {
  const port = freePort();
  const conns = new Set<Deno.Conn>();
  let listener: Deno.Listener | undefined;
  const pipe = async (from: Deno.Conn, to: Deno.Conn) => {
    try {
      await from.readable.pipeTo(to.writable);
    } catch { /* cut */ }
    for (const c of [from, to]) {
      try {
        c.close();
      } catch { /* closed */ }
      conns.delete(c);
    }
  };
  const open = () => {
    const l = Deno.listen({ hostname: "127.0.0.1", port });
    listener = l;
    (async () => {
      for await (const inbound of l) {
        try {
          const outbound = await Deno.connect(target);
          conns.add(inbound).add(outbound);
          void pipe(inbound, outbound);
          void pipe(outbound, inbound);
        } catch {
          inbound.close();
        }
      }
    })().catch(() => {});
  };
  const cut = () => {
    listener?.close();
    listener = undefined;
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    conns.clear();
  };
  open();
  return { url: `http://127.0.0.1:${port}`, cut, restore: open, close: cut };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test({
  name: "etcd3: a server whose watch cannot resume after a compaction reads again, " +
    "ends its watches with 410 and serves the new state",
  ignore: !etcdInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using member = await startEtcdMember();
    const etcd = new URL(member.clientUrl);
    const cutOff = relay({ hostname: etcd.hostname, port: Number(etcd.port) });
    try {
      const opts = { storage: "etcd3", controllers: WITHOUT_NAMESPACE_DEFAULTS };
      await using a = await testServer({ ...opts, etcdServers: [cutOff.url] });
      await using b = await testServer({ ...opts, etcdServers: [member.clientUrl] });

      const first = await createAsAdmin(b, CM, { metadata: { name: "before" } });
      assertEquals((await a.json("GET", `${CM}/before`)).status, 200);
      const watch = await a.request(
        "GET",
        `${CM}?watch=1&resourceVersion=${first.metadata.resourceVersion}`,
      );
      assertEquals(watch.status, 200);
      const body = watch.body!.pipeThrough(new TextDecoderStream());

      cutOff.cut();
      await until("/readyz to fail while cut off", async () => {
        const r = await a.request("GET", "/readyz");
        await r.body?.cancel();
        return r.status === 500 ? true : undefined;
      });
      await createAsAdmin(b, CM, { metadata: { name: "during" }, data: { k: "1" } });
      assertEquals((await b.json("DELETE", `${CM}/before`)).status, 200);
      const rev = Number((await b.json("GET", CM)).body.metadata.resourceVersion) + 1;
      const compacted = await fetch(`${member.clientUrl}/v3/kv/compaction`, {
        method: "POST",
        body: JSON.stringify({ revision: String(rev), physical: true }),
      });
      assertEquals(compacted.status, 200, await compacted.text());
      cutOff.restore();

      // The watch ends with 410 Expired: what it missed is gone from etcd's history.
      let text = "";
      for await (const chunk of body) {
        text += chunk;
        if (text.includes('"ERROR"')) break;
      }
      const events = text.trim().split("\n").map((l) => JSON.parse(l));
      const last = events.at(-1);
      assertEquals(last.type, "ERROR", text);
      assertEquals(last.object.code, 410);
      assertEquals(last.object.reason, "Expired");

      // Reads show the new state; readiness is back.
      const names = await until("the new state on the cut-off server", async () => {
        const l = await a.json("GET", `${CM}?resourceVersion=0`);
        const n = l.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
        return n.includes("during") ? n : undefined;
      });
      assert(!names.includes("before"), `deleted object still listed: ${names}`);
      await until("/readyz to pass again (the watch re-established)", async () => {
        const r = await a.request("GET", "/readyz");
        await r.body?.cancel();
        return r.status === 200 ? true : undefined;
      });
      // A new watch from the current list works.
      const list = await a.json("GET", CM);
      assertEquals(list.status, 200);
      const again = await a.request(
        "GET",
        `${CM}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}&timeoutSeconds=1`,
      );
      assertEquals(again.status, 200);
      await again.body?.cancel();
    } finally {
      cutOff.close();
    }
  },
});

Deno.test({
  name: "etcd3: a server that just started serves a watch from a resourceVersion another gave " +
    "(etcd's history is replayed into its copy)",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    const opts = {
      storage: "etcd3",
      etcdServers: [member.clientUrl],
      controllers: WITHOUT_NAMESPACE_DEFAULTS,
    };
    await using a = await testServer(opts);
    const first = await createAsAdmin(a, CM, { metadata: { name: "one" } });
    await createAsAdmin(a, CM, { metadata: { name: "two" } });
    assertEquals((await a.json("DELETE", `${CM}/one`)).status, 200);

    await using late = await testServer(opts);
    const watch = await late.request(
      "GET",
      `${CM}?watch=1&resourceVersion=${first.metadata.resourceVersion}&timeoutSeconds=2`,
    );
    assertEquals(watch.status, 200);
    const events = (await watch.text()).trim().split("\n").map((l) => JSON.parse(l));
    assertEquals(events.map((e) => `${e.type} ${e.object.metadata.name}`), [
      "ADDED two",
      "DELETED one",
    ]);
    // And a read at the older revision.
    const old = await late.json(
      "GET",
      `${CM}?resourceVersion=${first.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    assertEquals(old.status, 200, JSON.stringify(old.body));
    assertEquals(old.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), [
      "one",
    ]);
  },
});
