// deno-lint-ignore-file no-explicit-any
/**
 * A watch stream read line by line, for tests: `next()` waits for the next event (or fails
 * after a deadline), `idle()` checks that nothing arrives for a while.
 */

import type { TestServer } from "./harness.ts";

export interface WatchEventJson {
  type: string;
  object: any;
}

export interface WatchStream extends AsyncDisposable {
  status: number;
  /** The next event; throws if none arrives within `ms`. */
  next(ms?: number): Promise<WatchEventJson>;
  /** Events arriving within `ms` (stops early after `max`). */
  collect(ms: number, max?: number): Promise<WatchEventJson[]>;
  /** Resolves true once the server ends the stream, false if it is still open after `ms`. */
  ended(ms?: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function openWatch(
  ts: TestServer,
  path: string,
  headers: Record<string, string> = {},
): Promise<WatchStream> {
  const res = await ts.request("GET", path, { headers });
  if (!res.body) throw new Error("no body");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let done = false;
  const queue: WatchEventJson[] = [];
  let pending: Promise<void> | undefined;
  const pump = () =>
    pending ??= reader.read().then(({ done: d, value }) => {
      pending = undefined;
      if (d) {
        done = true;
        return;
      }
      buf += value;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) queue.push(JSON.parse(line));
      }
    });
  const wait = async (ms: number): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
    try {
      return await Promise.race([pump().then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  const stream: WatchStream = {
    status: res.status,
    async next(ms = 5000) {
      const deadline = Date.now() + ms;
      while (!queue.length) {
        if (done) throw new Error("the watch ended");
        if (!await wait(deadline - Date.now())) throw new Error(`no watch event in ${ms} ms`);
      }
      return queue.shift()!;
    },
    async collect(ms, max = Infinity) {
      const out: WatchEventJson[] = [];
      const deadline = Date.now() + ms;
      while (out.length < max) {
        if (queue.length) {
          out.push(queue.shift()!);
          continue;
        }
        if (done || Date.now() >= deadline) break;
        await wait(deadline - Date.now());
      }
      return out;
    },
    async ended(ms = 5000) {
      const deadline = Date.now() + ms;
      while (!done) {
        if (Date.now() >= deadline) return false;
        await wait(deadline - Date.now());
      }
      return true;
    },
    async close() {
      await reader.cancel().catch(() => {});
      await pending?.catch(() => {});
    },
    async [Symbol.asyncDispose]() {
      await stream.close();
    },
  };
  return stream;
}
