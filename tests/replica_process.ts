/**
 * `platform serve` replicas as child processes on etcd, for tests that SIGKILL and restart
 * them: each keeps its data directory and port across restarts. With a shared `--token`, one CA
 * and one admin token reach every replica.
 */

import { fileURLToPath } from "node:url";
import { freePort } from "./harness.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface Replica {
  name: string;
  url: string;
  dataDir: string;
  readonly running: boolean;
  /** Starts it (again) and resolves once /readyz answers 200. */
  start(): Promise<void>;
  /** SIGKILL, and waits for the exit (undefined when it was not running). */
  kill(): Promise<Deno.CommandStatus | undefined>;
  /** SIGTERM, and waits for the exit (undefined when it was not running). */
  stop(): Promise<Deno.CommandStatus | undefined>;
  /** The last lines it printed since it was last started. */
  lines(): string[];
  log(): string;
}

export interface ReplicaOptions {
  etcdServers: string[];
  token?: string;
  /** More `serve` flags. */
  flags?: string[];
}

/** A replica (not started yet) in a new temporary data directory. */
export async function replica(name: string, opts: ReplicaOptions): Promise<Replica> {
  const dataDir = await Deno.makeTempDir({ prefix: `platform-${name}-` });
  const port = freePort();
  const url = `https://127.0.0.1:${port}`;
  let proc: Deno.ChildProcess | undefined;
  let exited = true;
  let lines: string[] = [];
  const args = [
    "run",
    "--allow-all",
    "main.ts",
    "serve",
    "--data-dir",
    dataDir,
    "--secure-port",
    String(port),
    "--storage",
    "etcd3",
    "--etcd-servers",
    opts.etcdServers.join(","),
    ...(opts.token === undefined ? [] : ["--token", opts.token]),
    ...(opts.flags ?? []),
  ];
  const waitExit = () => proc ? proc.status : Promise.resolve(undefined);
  const r: Replica = {
    name,
    url,
    dataDir,
    get running() {
      return !exited;
    },
    async start() {
      if (!exited) return;
      lines = [];
      proc = new Deno.Command(Deno.execPath(), {
        args,
        cwd: ROOT,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      exited = false;
      proc.status.then(() => exited = true);
      for (const stream of [proc.stdout, proc.stderr]) {
        (async () => {
          for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
            lines.push(...chunk.split("\n").filter((l) => l));
            if (lines.length > 1000) lines = lines.slice(-1000);
          }
        })().catch(() => {});
      }
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (exited) throw new Error(`${name} exited at start:\n${lines.join("\n")}`);
        const ca = await Deno.readTextFile(`${dataDir}/pki/ca.crt`).catch(() => undefined);
        if (ca) {
          const client = Deno.createHttpClient({ caCerts: [ca], http2: false });
          try {
            const res = await fetch(`${url}/readyz`, { client, signal: AbortSignal.timeout(1000) });
            await res.body?.cancel();
            if (res.status === 200) return;
          } catch {
            /* not yet */
          } finally {
            client.close();
          }
        }
        if (Date.now() > deadline) {
          throw new Error(`${name} not ready in 30 s:\n${lines.join("\n")}`);
        }
        await new Promise((res) => setTimeout(res, 100));
      }
    },
    kill() {
      if (!exited) proc?.kill("SIGKILL");
      return waitExit();
    },
    stop() {
      if (!exited) proc?.kill("SIGTERM");
      return waitExit();
    },
    lines: () => lines,
    log: () => lines.join("\n"),
  };
  return r;
}
