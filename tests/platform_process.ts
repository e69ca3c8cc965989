/**
 * The real `platform serve` as a child process (the crash test, the `--workers` tests): the log
 * lines kept, signals sent as an operator would. A child, not an embedded server, so that a
 * SIGKILL, a test-only environment variable or a dying thread concerns that process alone.
 */

import { fileURLToPath } from "node:url";
import { textLines } from "./text_lines.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const START_TIMEOUT_MS = 60_000;

export interface PlatformProcess extends AsyncDisposable {
  url: string;
  caCertPem: string;
  token: string;
  dataDir: string;
  /** Every line of its stderr and stdout so far. */
  lines: string[];
  /** Resolves when a line matches (rejects if the process ends first). */
  waitFor(re: RegExp): Promise<string>;
  /** Sends `signal`; resolves with the exit status once both pipes are at EOF. */
  stop(signal: Deno.Signal): Promise<Deno.CommandStatus>;
  status: Promise<Deno.CommandStatus>;
}

/** Starts `platform serve --secure-port 0 <flags>` on `dataDir` (made if absent). */
export async function startPlatform(
  dataDir: string,
  flags: string[],
  env: Record<string, string> = {},
): Promise<PlatformProcess> {
  const proc = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "main.ts",
      "serve",
      "--data-dir",
      dataDir,
      "--secure-port",
      "0",
      "--log-level",
      "info",
      ...flags,
    ],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve(line: string): void }[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const line of textLines(stream)) {
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  };
  const drained = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const ended = drained.then(() => proc.status);
  const waitFor = (re: RegExp): Promise<string> => {
    const seen = lines.find((l) => re.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    const { promise, resolve } = Promise.withResolvers<string>();
    waiters.push({ re, resolve });
    return Promise.race([
      promise,
      ended.then((): string => {
        throw new Error(`the server exited before logging ${re}:\n${lines.join("\n")}`);
      }),
    ]);
  };
  const stop = async (signal: Deno.Signal) => {
    try {
      proc.kill(signal);
    } catch { /* already gone */ }
    return await ended;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let url: string;
  try {
    const line = await Promise.race([
      waitFor(/serving on https:\/\/\S+:\d+/),
      new Promise<never>((_, reject) =>
        timer = setTimeout(
          () => reject(new Error(`the server did not serve in time:\n${lines.join("\n")}`)),
          START_TIMEOUT_MS,
        )
      ),
    ]);
    url = line.match(/serving on (https:\/\/\S+:\d+)/)![1];
  } catch (err) {
    await stop("SIGKILL");
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    url,
    caCertPem: await Deno.readTextFile(`${dataDir}/pki/ca.crt`),
    token: (await Deno.readTextFile(`${dataDir}/pki/admin.token`)).trim(),
    dataDir,
    lines,
    waitFor,
    stop,
    status: ended,
    async [Symbol.asyncDispose]() {
      await stop("SIGKILL");
    },
  };
}
