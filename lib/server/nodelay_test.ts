import { assert, assertEquals } from "../../tests/assert.ts";
import { setListenerNoDelay } from "./nodelay.ts";

/** TCP_NODELAY of every socket descriptor of this process bound to `port`, via getsockopt. */
function noDelayOf(port: number): number[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    for (const line of Deno.readTextFileSync(table).split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length >= 10 && cols[1].endsWith(`:${hexPort}`)) inodes.add(cols[9]);
    }
  }
  const lib = Deno.dlopen("libc.so.6", {
    getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  });
  try {
    const values: number[] = [];
    for (const entry of Deno.readDirSync("/proc/self/fd")) {
      let link = "";
      try {
        link = Deno.readLinkSync(`/proc/self/fd/${entry.name}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (!m || !inodes.has(m[1])) continue;
      const value = new Int32Array(1);
      const len = new Uint32Array([4]);
      assertEquals(lib.symbols.getsockopt(Number(entry.name), 6, 1, value, len), 0);
      values.push(value[0]);
    }
    return values;
  } finally {
    lib.close();
  }
}

Deno.test({
  name: "setListenerNoDelay sets TCP_NODELAY on the listening socket, which accepted ones inherit",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("ok"),
    );
    try {
      const port = server.addr.port;
      assertEquals(noDelayOf(port), [0]);
      assertEquals(setListenerNoDelay(port), undefined);
      assertEquals(noDelayOf(port), [1]);
      // A connection accepted afterwards carries the option too (both ends are ours: the
      // server's accepted socket is bound to `port` as well).
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
      const buf = new Uint8Array(1024);
      assert(((await conn.read(buf)) ?? 0) > 0);
      const values = noDelayOf(port);
      assertEquals(values.length, 2);
      assert(values.every((v) => v === 1), `TCP_NODELAY per socket: ${values}`);
      conn.close();
    } finally {
      await server.shutdown();
    }
  },
});

Deno.test("setListenerNoDelay explains when there is no such listener", () => {
  const reason = setListenerNoDelay(1);
  assert(reason !== undefined && /no listening socket|not supported/.test(reason), reason);
});
