/**
 * One etcd member for tests: Debian's `etcd` (`apt-get install etcd-server`) on free loopback
 * ports, in a temp directory (on /dev/shm when there is one: etcd fsyncs every commit), stopped
 * (SIGTERM, then SIGKILL) and removed on dispose.
 *
 * Tests that need etcd check {@link etcdInstalled}; without the binary they skip with a message,
 * except under `CI=true`, where {@link requireEtcdUnderCi} registers a failing test instead
 * (`.ci/run` installs etcd when it is missing).
 *
 * @example
 * ```ts
 * await using member = await startEtcdMember();
 * // member.clientUrl: http://127.0.0.1:<port>
 * ```
 * @module
 */

/** The etcd binary: `ETCD_BIN`, or `etcd` on PATH. */
export const ETCD_BIN = Deno.env.get("ETCD_BIN") ?? "etcd";

async function etcdAvailable(): Promise<boolean> {
  try {
    const out = await new Deno.Command(ETCD_BIN, { args: ["--version"], stdout: "null" }).output();
    return out.success;
  } catch {
    return false;
  }
}

/** Whether an etcd binary runs on this machine. */
export const etcdInstalled: boolean = await etcdAvailable();

/**
 * Under `CI=true` a missing etcd is a failure: registers a test that says so. Elsewhere prints
 * why the tests of `file` are skipped. Call once per test file that needs etcd.
 */
export function requireEtcdUnderCi(file: string): void {
  if (etcdInstalled) return;
  if (Deno.env.get("CI") === "true") {
    Deno.test(`${file}: etcd is installed (required under CI)`, () => {
      throw new Error(`${ETCD_BIN} not found: install etcd-server (apt-get install etcd-server)`);
    });
  } else {
    console.warn(`${file}: skipped: ${ETCD_BIN} not found (apt-get install etcd-server)`);
  }
}

/** A running member; disposing it stops it and removes its directory. */
export interface EtcdMember extends AsyncDisposable {
  /** `http://127.0.0.1:<client port>`. */
  clientUrl: string;
  /** The member's data directory. */
  dataDir: string;
  /** What etcd printed so far (for failures). */
  output(): string;
  /** SIGTERM, SIGKILL after 5 s, then remove the directory. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link startEtcdMember}. */
export interface EtcdMemberOptions {
  /** Member name. @default "test" */
  name?: string;
  /** How long to wait for the member to answer. @default 20_000 */
  readyTimeoutMs?: number;
  /** Where its directory is made (a benchmark puts it on the disk it compares with).
   * @default /dev/shm when there is one, else the system's temporary directory */
  baseDir?: string;
}

/** A free TCP port on 127.0.0.1 (bound and released; etcd binds it right after). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

export async function tempBase(): Promise<string | undefined> {
  try {
    return (await Deno.stat("/dev/shm")).isDirectory ? "/dev/shm" : undefined;
  } catch {
    return undefined;
  }
}

/** Starts one etcd member and waits until it serves requests. */
export async function startEtcdMember(opts: EtcdMemberOptions = {}): Promise<EtcdMember> {
  const name = opts.name ?? "test";
  const dir = await Deno.makeTempDir({
    dir: opts.baseDir ?? await tempBase(),
    prefix: "etcd-member-",
  });
  for (let attempt = 0;; attempt++) {
    try {
      return await startOnce(name, dir, opts.readyTimeoutMs ?? 20_000);
    } catch (err) {
      // A port taken between freePort() and etcd's bind: try other ports.
      if (attempt >= 2 || !/address already in use/.test(String(err))) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
        throw err;
      }
      await Deno.remove(`${dir}/data`, { recursive: true }).catch(() => {});
    }
  }
}

async function startOnce(name: string, dir: string, readyTimeoutMs: number): Promise<EtcdMember> {
  const clientUrl = `http://127.0.0.1:${freePort()}`;
  const peerUrl = `http://127.0.0.1:${freePort()}`;
  const dataDir = `${dir}/data`;
  const proc = await spawnEtcd(
    [
      `--name=${name}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${name}=${peerUrl}`,
      "--initial-cluster-state=new",
      "--log-level=warn",
    ],
    clientUrl,
    readyTimeoutMs,
  );
  let stopping: Promise<void> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      await proc.stop("SIGTERM");
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  return {
    clientUrl,
    dataDir,
    output: proc.output,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** A running etcd process. */
export interface EtcdProcess {
  output(): string;
  readonly exited: boolean;
  /** Sends `signal` (SIGKILL 5 s after a SIGTERM) and waits for the exit. */
  stop(signal: "SIGTERM" | "SIGKILL"): Promise<void>;
}

/** Starts `etcd <args>` and waits until it answers at `clientUrl`. */
export async function spawnEtcd(
  args: string[],
  clientUrl: string,
  readyTimeoutMs: number,
): Promise<EtcdProcess> {
  const child = new Deno.Command(ETCD_BIN, { args, stdout: "piped", stderr: "piped" }).spawn();
  let out = "";
  const decoder = new TextDecoder();
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) out = (out + decoder.decode(chunk)).slice(-20_000);
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]).catch(() => {});
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async (signal: "SIGTERM" | "SIGKILL") => {
    if (!exited) {
      try {
        child.kill(signal);
      } catch { /* gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5_000);
      await status;
      clearTimeout(timer);
    }
    await drained;
  };
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) {
      await drained;
      throw new Error(`etcd exited before serving (${clientUrl}):\n${out}`);
    }
    try {
      const res = await fetch(`${clientUrl}/v3/kv/range`, {
        method: "POST",
        body: JSON.stringify({ key: btoa("/"), count_only: true }),
        signal: AbortSignal.timeout(1_000),
      });
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not yet */ }
    if (Date.now() > deadline) {
      await stop("SIGKILL");
      throw new Error(`etcd did not answer at ${clientUrl} within ${readyTimeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    output: () => out,
    get exited() {
      return exited;
    },
    stop,
  };
}
