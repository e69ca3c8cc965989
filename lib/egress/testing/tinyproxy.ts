/**
 * Debian's `tinyproxy` (`apt-get install tinyproxy`) for tests: an HTTP CONNECT proxy on a free
 * loopback port with a generated configuration, run in the foreground, its log in a temp
 * directory; stopped and removed on dispose.
 *
 * Tests that need it check {@link tinyproxyInstalled}; without it they skip with a message,
 * except under `CI=true`, where {@link requireTinyproxyUnderCi} registers a failing test
 * (`.ci/run` installs it).
 *
 * @example
 * ```ts
 * await using proxy = await startTinyproxy({ connectPorts: [webhookPort] });
 * // proxy.url: http://127.0.0.1:<port>; await proxy.log() shows the CONNECTs
 * ```
 * @module
 */

export const TINYPROXY_BIN = Deno.env.get("TINYPROXY_BIN") ?? "/usr/bin/tinyproxy";

async function available(): Promise<boolean> {
  try {
    const out = await new Deno.Command(TINYPROXY_BIN, { args: ["-v"], stdout: "null" }).output();
    return out.success;
  } catch {
    return false;
  }
}

/** Whether tinyproxy runs on this machine. */
export const tinyproxyInstalled: boolean = await available();

/** Under `CI=true` a missing tinyproxy fails (a registered test says so); else a warning. */
export function requireTinyproxyUnderCi(file: string): void {
  if (tinyproxyInstalled) return;
  if (Deno.env.get("CI") === "true") {
    Deno.test(`${file}: tinyproxy is installed (required under CI)`, () => {
      throw new Error(`${TINYPROXY_BIN} not found: apt-get install tinyproxy`);
    });
  } else {
    console.warn(`${file}: skipped: ${TINYPROXY_BIN} not found (apt-get install tinyproxy)`);
  }
}

export interface Tinyproxy extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The proxy's log so far (a `CONNECT` line per tunnel). */
  log(): Promise<string>;
  stop(): Promise<void>;
}

export interface TinyproxyOptions {
  /** The only ports CONNECT may reach (`ConnectPort`); others are refused with 403. */
  connectPorts: number[];
}

/** Starts tinyproxy and resolves once it accepts connections. */
export async function startTinyproxy(opts: TinyproxyOptions): Promise<Tinyproxy> {
  const dir = await Deno.makeTempDir({ prefix: "platform-tinyproxy-" });
  const port = freePort();
  const logFile = `${dir}/tinyproxy.log`;
  const config = [
    `Port ${port}`,
    "Listen 127.0.0.1",
    "Timeout 60",
    `LogFile "${logFile}"`,
    "LogLevel Connect",
    "MaxClients 50",
    "Allow 127.0.0.1",
    ...opts.connectPorts.map((p) => `ConnectPort ${p}`),
    "",
  ].join("\n");
  await Deno.writeTextFile(`${dir}/tinyproxy.conf`, config);
  const child = new Deno.Command(TINYPROXY_BIN, {
    args: ["-d", "-c", `${dir}/tinyproxy.conf`],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const log = () => Deno.readTextFile(logFile).catch(() => "");
  for (let i = 0; i < 200; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return { url: `http://127.0.0.1:${port}`, port, log, stop, [Symbol.asyncDispose]: stop };
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  const text = await log();
  await stop();
  throw new Error(`tinyproxy did not listen on 127.0.0.1:${port}: ${text}`);
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
