/**
 * End to end with a real client library: an informer from `@kubernetes/client-node` (list, then
 * watch from the list's resourceVersion) must mirror the server's configmaps through 1,000 mixed
 * writes and through a restart of the server on the same data directory and port, resuming its
 * watch from the last version it saw instead of listing again.
 *
 * client-node 2.x sends every request through undici, whose connector offers h2 over ALPN by
 * default; our server picks h2, and under Deno undici then runs on Deno's `node:http2`, which can
 * abort the whole test process when the server sends GOAWAY (as it does when it stops).
 * `Http1KubeConfig` below keeps client-node's own dispatcher but makes its connector offer only
 * `http/1.1`, and the test checks, through undici's `undici:client:connected` diagnostics
 * channel, that every connection it opened speaks HTTP/1.1. The server still offers h2 to
 * everyone else (this file's own fetch included).
 */

import diagnostics from "node:diagnostics_channel";
import { assert, assertEquals } from "./assert.ts";
import { type ServerHandle, startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";
import { freePort, ROOT_CA_CONFIGMAP } from "./harness.ts";

/**
 * client-node's typings pull in `@types/node` 26, whose `node:assert` signatures reject
 * tests/assert.ts's `message?: string`: any static import of the package, even `import type`,
 * fails `deno check` for every test. So it is imported at run time through a specifier the type
 * checker does not follow, and described by the few signatures this test uses.
 */
const CLIENT_NODE: string = "@kubernetes/client-node";

interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}
interface ObjectList {
  items: KubeObject[];
  metadata?: { resourceVersion?: string };
}
/** undici's Dispatcher, as far as used here. */
interface Dispatcher {
  destroy(): Promise<void>;
}
/** client-node's RequestContext (gen/http/http.ts). */
interface RequestContext {
  getDispatcher(): Dispatcher | undefined;
  setDispatcher(dispatcher: Dispatcher): void;
}
/** client-node's DispatcherOptions (config.ts). */
type DispatcherOptions =
  | { type: "agent"; connect: Record<string, unknown> }
  | { type: "proxy" | "socks" | "none" };
interface KubeConfig {
  loadFromFile(path: string): void;
  getCurrentCluster(): { server: string } | null;
  makeApiClient<T>(api: new (config: never) => T): T;
  createDispatcherOptions(cluster: unknown, agentOptions: unknown): DispatcherOptions;
  applySecurityAuthentication(ctx: RequestContext): Promise<void>;
}
interface CoreV1Api {
  listNamespacedConfigMap(req: { namespace: string }): Promise<ObjectList>;
}
interface Informer {
  on(verb: "connect" | "error", cb: (err?: { message?: string; code?: string }) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  list(namespace?: string): ReadonlyArray<KubeObject>;
}
interface ClientNode {
  KubeConfig: new () => KubeConfig;
  CoreV1Api: new (config: never) => CoreV1Api;
  makeInformer(
    kc: KubeConfig,
    path: string,
    list: () => Promise<ObjectList>,
    labelSelector?: string,
  ): Informer;
}
const k8s = await import(CLIENT_NODE) as ClientNode;

const NS = "informer-e2e";
const CONVERGE_DEADLINE_MS = 30_000;

/**
 * A KubeConfig whose undici connections speak HTTP/1.1 only, all through one dispatcher (so the
 * test can close its sockets at the end).
 *
 * client-node builds a new undici `Agent({ connect })` from `createDispatcherOptions()` for every
 * request (`applySecurityAuthentication`). undici's Client hands `connect` to its connector last,
 * so `allowH2: false` there overrides its default (`true`): the TLS handshake then offers only
 * `http/1.1` in ALPN, and the Client picks its HTTP/1.1 implementation from the negotiated
 * protocol.
 */
class Http1KubeConfig extends k8s.KubeConfig {
  #dispatcher: Dispatcher | undefined;

  override createDispatcherOptions(cluster: unknown, agentOptions: unknown): DispatcherOptions {
    const opts = super.createDispatcherOptions(cluster, agentOptions);
    if (opts.type !== "agent") {
      throw new Error(`expected a direct TLS connection to the server, got "${opts.type}"`);
    }
    return { ...opts, connect: { ...opts.connect, allowH2: false } };
  }

  override async applySecurityAuthentication(ctx: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(ctx);
    // super made a fresh, unused Agent; keep the first one and reuse it for every request.
    this.#dispatcher ??= ctx.getDispatcher();
    if (this.#dispatcher) ctx.setDispatcher(this.#dispatcher);
  }

  async close(): Promise<void> {
    await this.#dispatcher?.destroy();
  }
}

/** What undici publishes when it has connected a socket (its `undici:client:connected`). */
interface UndiciConnected {
  connectParams?: { version?: string };
  socket?: { alpnProtocol?: string | false };
}

/** A small deterministic PRNG (xorshift32), so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A JSON response body, as far as read here. */
interface Body extends KubeObject {
  items?: KubeObject[];
  text?: string;
}

function rvOf(obj: KubeObject): string {
  const rv = obj.metadata?.resourceVersion;
  assert(typeof rv === "string" && /^\d+$/.test(rv), `bad resourceVersion: ${JSON.stringify(obj)}`);
  return rv;
}

interface Counts {
  create: number;
  update: number;
  delete: number;
}

Deno.test("a client-node informer stays in sync through 1,000 writes and a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-informer-" });
  const port = freePort();
  const start = () =>
    startServer({ dataDir, storage: "file", securePort: port, logger: silentLogger });
  let server: ServerHandle = await start();
  const http = Deno.createHttpClient({ caCerts: [server.caCertPem] });

  const request = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Body }> => {
    const res = await fetch(server.url + path, {
      method,
      headers: {
        Authorization: `Bearer ${server.adminToken}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      client: http,
    });
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      return { status: res.status, body: { text } };
    }
  };
  const expectStatus = async (
    status: number,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Body> => {
    const r = await request(method, path, body);
    assertEquals(
      r.status,
      status,
      `${method} ${path} -> ${r.status}: ${JSON.stringify(r.body)}`,
    );
    return r.body;
  };

  /** The resourceVersion of every configmap the writers believe exists. */
  const written = new Map<string, string>();
  const configmaps = `/api/v1/namespaces/${NS}/configmaps`;

  /** `ops` mixed writes by 4 concurrent writers, each on its own 25 names. */
  const write = async (ops: number, seed: number): Promise<Counts> => {
    const counts: Counts = { create: 0, update: 0, delete: 0 };
    const writer = async (w: number) => {
      const rand = random(seed * 31 + w);
      for (let step = 0; step < ops / 4; step++) {
        const name = `cm-${w}-${Math.floor(rand() * 25)}`;
        const rv = written.get(name);
        const data = { writer: String(w), step: String(step), seed: String(seed) };
        if (rv === undefined) {
          const obj = await expectStatus(201, "POST", configmaps, {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name, labels: { writer: String(w) } },
            data,
          });
          written.set(name, rvOf(obj));
          counts.create++;
        } else if (rand() < 0.7) {
          const obj = await expectStatus(200, "PUT", `${configmaps}/${name}`, {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name, resourceVersion: rv, labels: { writer: String(w) } },
            data,
          });
          const next = rvOf(obj);
          assert(
            BigInt(next) > BigInt(rv),
            `update of ${name} did not advance its resourceVersion: ${rv} -> ${next}`,
          );
          written.set(name, next);
          counts.update++;
        } else {
          await expectStatus(200, "DELETE", `${configmaps}/${name}`);
          written.delete(name);
          counts.delete++;
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    return counts;
  };

  /** name -> resourceVersion, sorted by name. */
  const versions = (items: ReadonlyArray<KubeObject>): Record<string, string> =>
    Object.fromEntries(
      items.map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!] as const)
        .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
    );
  const serverVersions = async (): Promise<Record<string, string>> =>
    versions((await expectStatus(200, "GET", configmaps)).items ?? []);

  const diff = (cache: Record<string, string>, server: Record<string, string>): string => {
    const lines: string[] = [];
    for (const name of new Set([...Object.keys(cache), ...Object.keys(server)])) {
      if (cache[name] !== server[name]) {
        lines.push(`  ${name}: informer ${cache[name] ?? "-"}, server ${server[name] ?? "-"}`);
      }
    }
    return lines.join("\n");
  };

  let kc: Http1KubeConfig | undefined;
  let informer: Informer | undefined;
  let stopping = false;
  let restartTimer: ReturnType<typeof setTimeout> | undefined;
  const errors: string[] = [];
  let connects = 0;
  let lists = 0;
  /** "<undici's protocol>/<ALPN>" of every connection client-node opened. */
  const protocols: string[] = [];
  const onConnected = (message: unknown) => {
    const m = message as UndiciConnected;
    protocols.push(`${m.connectParams?.version}/${m.socket?.alpnProtocol}`);
  };
  diagnostics.subscribe("undici:client:connected", onConnected);

  /** Waits until the informer's cache equals the server's list; fails with a diff. */
  const converge = async (what: string) => {
    const deadline = Date.now() + CONVERGE_DEADLINE_MS;
    for (;;) {
      const server = await serverVersions();
      const cache = versions(informer!.list(NS));
      if (JSON.stringify(cache) === JSON.stringify(server)) return server;
      if (Date.now() > deadline) {
        throw new Error(
          `${what}: the informer's cache still differs from the server's list after ` +
            `${CONVERGE_DEADLINE_MS} ms (watch errors: ${errors.join("; ") || "none"}):\n` +
            diff(cache, server),
        );
      }
      await sleep(50);
    }
  };

  try {
    await expectStatus(201, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });

    kc = new Http1KubeConfig();
    kc.loadFromFile(server.kubeconfigPath!);
    assertEquals(kc.getCurrentCluster()?.server, server.url);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    informer = k8s.makeInformer(
      kc,
      configmaps,
      () => {
        lists++;
        return core.listNamespacedConfigMap({ namespace: NS });
      },
    );
    const inf = informer;
    inf.on("connect", () => connects++);
    // client-node's informer stops on a failed (re)connection and leaves restarting to its
    // user: start() again resumes from the last resourceVersion it saw.
    inf.on("error", (err) => {
      if (stopping) return;
      errors.push(String(err?.message ?? err?.code ?? err));
      clearTimeout(restartTimer);
      restartTimer = setTimeout(() => {
        restartTimer = undefined;
        if (!stopping) inf.start().catch((e) => errors.push(`start: ${e}`));
      }, 100);
    });
    await inf.start();
    assertEquals(lists, 1);

    const before = await write(1000, 1);
    assert(
      before.create > 0 && before.update > 0 && before.delete > 0,
      `not a mix of writes: ${JSON.stringify(before)}`,
    );
    const synced = await converge("after 1,000 writes");
    // What the test wrote; the namespace's kube-root-ca.crt is in both lists besides.
    const own = Object.fromEntries(
      Object.entries(synced).filter(([name]) => name !== ROOT_CA_CONFIGMAP),
    );
    assertEquals(
      own,
      versions([...written].map(([name, rv]) => ({
        metadata: { name, resourceVersion: rv },
      }))),
    );

    await server.close();
    server = await start();
    assertEquals(
      await serverVersions(),
      synced,
      "the restarted server does not serve what was acknowledged before the restart",
    );

    const after = await write(100, 2);
    assertEquals(after.create + after.update + after.delete, 100);
    await converge("after the restart and 100 more writes");

    assertEquals(lists, 1, `the informer listed again (connects: ${connects}, errors: ${errors})`);
    assert(connects >= 2, `the informer never reconnected (connects: ${connects})`);
    assert(
      protocols.length > 0 && protocols.every((p) => p === "h1/http/1.1"),
      `client-node connected with something else than HTTP/1.1: ${protocols}`,
    );
  } finally {
    diagnostics.unsubscribe("undici:client:connected", onConnected);
    stopping = true;
    clearTimeout(restartTimer);
    await informer?.stop();
    await kc?.close();
    http.close();
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
