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

/** A file-backed server in a temporary data dir, and kubectl pointed at it. */
export async function kubectlEnv(opts: StartOptions = {}): Promise<KubectlEnv> {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-e2e-" });
  const home = await Deno.makeTempDir({ prefix: "platform-e2e-home-" });
  const server = await startServer({ dataDir, logger: silentLogger, ...opts });
  const command = (args: string[], stdin: "null" | "piped") =>
    new Deno.Command(KUBECTL, {
      args: ["--kubeconfig", server.kubeconfigPath!, ...args],
      env: { HOME: home, KUBECONFIG: server.kubeconfigPath! },
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
    server,
    kubectl,
    async ok(args, stdin) {
      const r = await kubectl(args, stdin);
      assertEquals(r.code, 0, `kubectl ${args.join(" ")} failed:\n${r.stderr}\n${r.stdout}`);
      return r.stdout;
    },
    spawn: (args) => command(args, "null").spawn(),
    async [Symbol.asyncDispose]() {
      await server.close();
      await Deno.remove(dataDir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    },
  };
}
