/**
 * The real kubectl against a real server: `/usr/bin/kubectl` (a dispatcher that runs the
 * kubectl matching our /version) with the server's admin kubeconfig and a private HOME, so
 * that discovery caches do not leak between tests. Tests skip when kubectl is missing, except
 * under CI=true where that is a failure.
 */

import { assertEquals } from "./assert.ts";
import { type ServerHandle, type StartOptions, startServer } from "../mod.ts";
import { silentLogger } from "../lib/server/log.ts";

export const KUBECTL = Deno.env.get("KUBECTL") ?? "/usr/bin/kubectl";

async function kubectlAvailable(): Promise<boolean> {
  try {
    return (await Deno.stat(KUBECTL)).isFile;
  } catch {
    return false;
  }
}

/** Whether kubectl is on this machine. */
export const kubectlInstalled = await kubectlAvailable();
if (!kubectlInstalled && Deno.env.get("CI") === "true") {
  Deno.test("kubectl is installed (required under CI)", () => {
    throw new Error(`${KUBECTL} not found: the kubectl end-to-end tests cannot run`);
  });
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlEnv extends AsyncDisposable {
  server: ServerHandle;
  /** Runs kubectl with `args` (and `stdin`, if given). */
  kubectl(args: string[], stdin?: string): Promise<Run>;
  /** Runs kubectl and fails the test unless it exits 0; returns stdout. */
  ok(args: string[], stdin?: string): Promise<string>;
  /** Starts kubectl without waiting (e.g. `get -w`). */
  spawn(args: string[]): Deno.ChildProcess;
}

/** Runs kubectl against a server. */
export interface KubectlRunner {
  /** Runs kubectl with `args` (and `stdin`, if given). */
  kubectl(args: string[], stdin?: string): Promise<Run>;
  /** Runs kubectl and fails the test unless it exits 0; returns stdout. */
  ok(args: string[], stdin?: string): Promise<string>;
  /** Starts kubectl without waiting (e.g. `get -w`). */
  spawn(args: string[]): Deno.ChildProcess;
}

export interface KubectlEnv extends KubectlRunner, AsyncDisposable {
  server: ServerHandle;
}

/**
 * kubectl with `server`'s admin kubeconfig and a private HOME, removed on dispose; the server
 * stays up. For a server started some other way (e.g. `testServer`). Other users sign in with
 * `--token`, which overrides the kubeconfig's.
 */
export async function kubectlFor(server: ServerHandle): Promise<KubectlRunner & AsyncDisposable> {
  if (!server.kubeconfigPath) throw new Error("the server wrote no admin kubeconfig");
  const kubeconfig = server.kubeconfigPath;
  const home = await Deno.makeTempDir({ prefix: "platform-e2e-home-" });
  const command = (args: string[], stdin: "null" | "piped") =>
    new Deno.Command(KUBECTL, {
      args: ["--kubeconfig", kubeconfig, ...args],
      env: { HOME: home, KUBECONFIG: kubeconfig },
      stdin,
      stdout: "piped",
      stderr: "piped",
    });
  const kubectl = async (args: string[], stdin?: string): Promise<Run> => {
    const child = command(args, stdin === undefined ? "null" : "piped").spawn();
    if (stdin !== undefined) {
      const w = child.stdin.getWriter();
      await w.write(new TextEncoder().encode(stdin));
      await w.close();
    }
    const out = await child.output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  return {
    kubectl,
    async ok(args, stdin) {
      const r = await kubectl(args, stdin);
      assertEquals(r.code, 0, `kubectl ${args.join(" ")} failed:\n${r.stderr}\n${r.stdout}`);
      return r.stdout;
    },
    spawn: (args) => command(args, "null").spawn(),
    [Symbol.asyncDispose]: () => Deno.remove(home, { recursive: true }),
  };
}

/** A file-backed server in a temporary data dir, and kubectl pointed at it. */
export async function kubectlEnv(opts: StartOptions = {}): Promise<KubectlEnv> {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-e2e-" });
  const server = await startServer({ dataDir, logger: silentLogger, ...opts });
  const runner = await kubectlFor(server);
  return {
    server,
    kubectl: runner.kubectl,
    ok: runner.ok,
    spawn: runner.spawn,
    async [Symbol.asyncDispose]() {
      await server.close();
      await Deno.remove(dataDir, { recursive: true });
      await runner[Symbol.asyncDispose]();
    },
  };
}
