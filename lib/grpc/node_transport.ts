/**
 * A Node socket (`node:net`, `node:tls`) as a session's {@link Transport}: what a client uses
 * when Deno's own TLS cannot do what it needs (a client certificate on a connection that is
 * already open, such as a proxy's tunnel: `Deno.startTls` takes none).
 * @module
 */

import type { Duplex } from "node:stream";
import type { Transport } from "./h2_session.ts";

/** Reads come from the socket's `data` events, queued until asked for; writes wait for the
 * socket to take them. */
export function nodeTransport(socket: Duplex): Transport {
  const queue: Uint8Array[] = [];
  let ended = false;
  let failure: Error | undefined;
  let waiting: (() => void) | undefined;
  const wake = () => {
    const w = waiting;
    waiting = undefined;
    w?.();
  };
  socket.on("data", (chunk: Uint8Array) => {
    queue.push(chunk);
    // Past a few chunks unread, the socket waits for the reader.
    if (queue.length > 16) socket.pause();
    wake();
  });
  socket.on("end", () => {
    ended = true;
    wake();
  });
  socket.on("close", () => {
    ended = true;
    wake();
  });
  socket.on("error", (err: Error) => {
    failure = err;
    wake();
  });
  return {
    async read(p: Uint8Array): Promise<number | null> {
      while (queue.length === 0) {
        if (failure) throw failure;
        if (ended) return null;
        await new Promise<void>((resolve) => waiting = resolve);
      }
      const chunk = queue[0];
      const n = Math.min(chunk.length, p.length);
      p.set(chunk.subarray(0, n));
      if (n === chunk.length) queue.shift();
      else queue[0] = chunk.subarray(n);
      if (queue.length <= 16) socket.resume();
      return n;
    },
    write(p: Uint8Array): Promise<number> {
      if (failure) return Promise.reject(failure);
      // A copy: the caller may reuse its buffer once this resolves, the socket may still hold it.
      const bytes = p.slice();
      return new Promise((resolve, reject) => {
        socket.write(bytes, (err?: Error | null) => err ? reject(err) : resolve(bytes.length));
      });
    },
    close(): void {
      socket.destroy();
    },
  };
}
