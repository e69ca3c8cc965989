/**
 * Helpers of the client tests (client_patch_test.ts, client_credentials_test.ts): run
 * `platform patch` in this process or as a process of main.ts, a file-backed server with
 * kubectl and admin calls, and kubectl run side by side with ours.
 */

import { assertEquals } from "./assert.ts";
import { type KubectlEnv, kubectlEnv } from "./kubectl.ts";
import { runPatchCommand } from "../lib/client/mod.ts";
import { versionInfo } from "../lib/server/version.ts";
import type { StartOptions } from "../mod.ts";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export const CLIENT_VERSION = versionInfo().gitVersion;

/** `platform patch <args>` in this process (the command's own function, as main.ts calls it). */
export async function ours(args: string[], opts: { clientVersion?: string } = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runPatchCommand(args, {
    stdout: (t) => stdout += t,
    stderr: (t) => stderr += t,
    clientVersion: opts.clientVersion ?? CLIENT_VERSION,
  });
  return { code, stdout, stderr };
}

/** Deno's cache: a test that changes HOME must not send deno looking for another one. */
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  JSON.parse(
    new TextDecoder().decode(
      (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output()).stdout,
    ),
  ).denoDir;

/** `platform patch <args>` as a process of main.ts, with `env` added. */
export async function platformPatch(
  args: string[],
  env: Record<string, string> = {},
): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../main.ts", import.meta.url).pathname, "patch", ...args],
    env: { DENO_DIR, ...env },
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

export async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-client-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/** A file-backed server with kubectl, and helpers to call the API as the admin. */
export async function env(opts: StartOptions = {}) {
  const e = await kubectlEnv(opts);
  const kc = e.server.kubeconfigPath!;
  const client = Deno.createHttpClient({ caCerts: [e.server.caCertPem] });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(e.server.url + path, {
      method,
      client,
      headers: {
        Authorization: `Bearer ${e.server.adminToken}`,
        "Content-Type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const configMap = async (ns: string, name: string, data: Record<string, string>) => {
    const res = await api("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
      data,
    });
    assertEquals(res.status, 201, JSON.stringify(res.body));
  };
  const namespace = async (name: string) => {
    const res = await api("POST", "/api/v1/namespaces", { metadata: { name } });
    assertEquals(res.status, 201, JSON.stringify(res.body));
  };
  /** `platform patch` with the admin kubeconfig. */
  const patch = (args: string[], o?: { clientVersion?: string }) =>
    ours([...args, "--platformconfig", kc], o);
  return {
    e,
    kc,
    api,
    configMap,
    namespace,
    patch,
    async [Symbol.asyncDispose]() {
      client.close();
      await e[Symbol.asyncDispose]();
    },
  };
}

/** Runs kubectl and ours with the same arguments; fails unless they print the same. */
export async function same(e: KubectlEnv, kc: string, args: string[], theirs: string[] = args) {
  const k = await e.kubectl(theirs);
  const o = await ours([...args, "--platformconfig", kc]);
  assertEquals(
    { code: o.code, stdout: o.stdout, stderr: o.stderr },
    { code: k.code === 0 ? 0 : 1, stdout: k.stdout, stderr: k.stderr },
    `platform patch ${args.join(" ")}`,
  );
  return o;
}
