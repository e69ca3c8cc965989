/**
 * The real kubectl against a real server: `/usr/bin/kubectl` (a dispatcher that runs the
 * kubectl matching our /version) with the server's admin kubeconfig and a private HOME, so
 * that discovery caches do not leak between tests. Tests skip when kubectl is missing, except
 * under CI=true where that is a failure.
 */

import { assertEquals } from "./assert.ts";
import { type ServerHandle, type StartOptions, startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";

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

/** Which kubectl {@link kubectlFor} runs, and with what extra environment. */
export interface KubectlOptions {
  /** The binary (default {@link KUBECTL}), e.g. one version of a matrix. */
  binary?: string;
  /** Extra environment variables, e.g. `KUBE_EDITOR`. */
  env?: Record<string, string>;
}

/**
 * kubectl with `server`'s admin kubeconfig and a private HOME, removed on dispose; the server
 * stays up. For a server started some other way (e.g. `testServer`). Other users sign in with
 * `--token`, which overrides the kubeconfig's.
 */
export async function kubectlFor(
  server: ServerHandle,
  opts: KubectlOptions = {},
): Promise<KubectlRunner & AsyncDisposable> {
  if (!server.kubeconfigPath) throw new Error("the server wrote no admin kubeconfig");
  const kubeconfig = server.kubeconfigPath;
  const home = await Deno.makeTempDir({ prefix: "platform-e2e-home-" });
  const command = (args: string[], stdin: "null" | "piped") =>
    new Deno.Command(opts.binary ?? KUBECTL, {
      args: ["--kubeconfig", kubeconfig, ...args],
      env: { HOME: home, KUBECONFIG: kubeconfig, ...opts.env },
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

/** The output of a long-running kubectl (e.g. `get -w`), read line by line as it comes. */
export interface LiveOutput extends AsyncDisposable {
  /** Every complete stdout line so far. */
  readonly lines: string[];
  /** stderr so far. */
  stderr(): string;
  /** Whether kubectl is still running. */
  running(): boolean;
  /** Resolves with kubectl's exit status once it has ended and its output is read. */
  readonly status: Promise<Deno.CommandStatus>;
  /**
   * Waits until `done(lines)` holds, for at most `timeoutMs` (30 s by default) or until
   * kubectl exits; fails naming `what` and showing what kubectl printed.
   */
  until(done: (lines: string[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
}

/** Reads `child`'s output as it comes; disposing kills kubectl if it still runs. */
export function liveOutput(child: Deno.ChildProcess): LiveOutput {
  const lines: string[] = [];
  let stderr = "";
  let exited = false;
  const readOut = (async () => {
    let partial = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      lines.push(...parts);
    }
    if (partial) lines.push(partial);
  })();
  const readErr = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  const status = Promise.all([child.status, readOut, readErr]).then(([s]) => s);
  status.finally(() => exited = true);
  return {
    lines,
    stderr: () => stderr,
    running: () => !exited,
    status,
    async until(done, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(lines)) {
        if (exited || Date.now() > deadline) {
          if (exited && done(lines)) return;
          throw new Error(
            `kubectl ${exited ? "exited" : "timed out"} before showing ${what}; ` +
              `it printed ${JSON.stringify(lines)}, stderr: ${stderr}`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* it has exited already */ }
      await status;
    },
  };
}
