// deno-lint-ignore-file no-explicit-any
/**
 * Test harness: a real server on a free loopback port over real HTTPS, and a small client
 * that trusts its CA and sends the admin token.
 */

import { type ServerHandle, type StartOptions, startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";
import { assertEquals, assertMatch } from "./assert.ts";

export interface TestServer extends AsyncDisposable {
  server: ServerHandle;
  /** fetch against the server with the admin token (unless `token: null`). */
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; headers?: Record<string, string>; token?: string | null },
  ): Promise<Response>;
  /** request() + JSON body. */
  json(
    method: string,
    path: string,
    opts?: { body?: unknown; headers?: Record<string, string>; token?: string | null },
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

export async function testServer(opts: StartOptions = {}): Promise<TestServer> {
  const server = await startServer({ storage: "memory", logger: silentLogger, ...opts });
  const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
  const request: TestServer["request"] = (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? server.adminToken : o.token;
    if (token) headers["Authorization"] = `Bearer ${token}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      headers["Content-Type"] ??= "application/json";
    }
    return fetch(server.url + path, { method, headers, body, client });
  };
  return {
    server,
    request,
    async json(method, path, o) {
      const res = await request(method, path, o);
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch { /* not JSON */ }
      return { status: res.status, body, headers: res.headers };
    },
    async [Symbol.asyncDispose]() {
      client.close();
      await server.close();
    },
  };
}

/** Creates an object as the admin; fails the test unless 201. Resolves with the object. */
export async function createAsAdmin(ts: TestServer, path: string, body: unknown): Promise<any> {
  const res = await ts.json("POST", path, { body });
  if (res.status !== 201) {
    throw new Error(`POST ${path}: expected 201, got ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return res.body;
}

/** A static token file (`--token-auth-file`) in a temporary directory, removed on dispose. */
export async function tokenFile(
  users: Record<string, { name: string; uid?: string; groups?: string[] }>,
): Promise<{ path: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "platform-tokens-" });
  const path = `${dir}/tokens.csv`;
  const lines = Object.entries(users).map(([token, u]) =>
    `${token},${u.name},${u.uid ?? u.name},"${(u.groups ?? []).join(",")}"`
  );
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** What a `platform` command printed and how it exited. */
export interface PlatformRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno run --allow-all main.ts <args>` (the `platform` command) to its end. */
export async function runPlatform(...args: string[]): Promise<PlatformRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * A start-up problem as the operator sees it: exit code 2 and exactly one line on stderr,
 * `platform: …` matching `re`, with no stack frame.
 */
export function assertConfigError(run: PlatformRun, re: RegExp): void {
  assertEquals(run.code, 2, `exit code; stderr: ${run.stderr}`);
  const lines = run.stderr.trimEnd().split("\n");
  assertEquals(lines.length, 1, `one line, got: ${run.stderr}`);
  assertMatch(lines[0], /^platform: /);
  assertEquals(/\bat .*:\d+:\d+/.test(lines[0]), false, `a stack frame: ${lines[0]}`);
  assertMatch(lines[0], re);
}

/**
 * A loopback port that was free a moment ago, for a server that must come back on the same
 * port after a restart.
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The ConfigMap the root-ca-cert-publisher controller keeps in every namespace. */
export const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";

/** ConfigMaps of a list without the one every namespace gets: those a test made itself. */
export function ownConfigMaps<T extends { metadata: { name: string } }>(items: T[]): T[] {
  return items.filter((i) => i.metadata.name !== ROOT_CA_CONFIGMAP);
}

/**
 * `--controllers` without the controllers that put objects in every namespace (the
 * `default` ServiceAccount, the `kube-root-ca.crt` ConfigMap), for tests of list and watch
 * mechanics that count every object of a namespace.
 */
export const WITHOUT_NAMESPACE_DEFAULTS = ["*", "-serviceaccount", "-root-ca-cert-publisher"];

/** `controllers` for a server whose tests write a ValidatingAdmissionPolicy's status or compare
 * one as written: the status controller would write it meanwhile (a 409, another status). */
export const WITHOUT_POLICY_STATUS = ["*", "-validatingadmissionpolicy-status-controller"];
