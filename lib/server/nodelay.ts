/**
 * TCP_NODELAY for the HTTPS listener.
 *
 * Deno.serve does not set TCP_NODELAY on TLS connections, and its HTTP/1.1 server writes a
 * response body of more than a few hundred bytes in a second TCP segment after the headers.
 * Nagle's algorithm then holds that segment until the client acknowledges the first one, and
 * a client that delays its ACK (Linux: 40 ms) waits that long on every request: python's
 * http.client measured 44 ms per GET of a 600-byte object on one keep-alive connection.
 * HTTP/2 clients (kubectl, client-go) are not affected.
 *
 * Linux copies TCP_NODELAY from a listening socket to every socket it accepts, so it is set
 * once, on the listener, through libc's setsockopt. The listener's descriptor is found by its
 * port: /proc/self/net/tcp{,6} maps the listening port to a socket inode, /proc/self/fd maps
 * the inode to a descriptor. Where that is not possible (another OS, no --allow-ffi) the
 * caller falls back to {@link streamLargeBodies}.
 */

const IPPROTO_TCP = 6;
const TCP_NODELAY = 1;
const TCP_LISTEN = "0A";

/** Sets TCP_NODELAY on this process's listening TCP socket on `port`. Returns why not, or
 * undefined on success. */
export function setListenerNoDelay(port: number): string | undefined {
  if (Deno.build.os !== "linux") return `not supported on ${Deno.build.os}`;
  let inodes: Set<string>;
  try {
    inodes = listeningInodes(port);
  } catch (err) {
    return `reading /proc/self/net: ${(err as Error).message}`;
  }
  if (!inodes.size) return `no listening socket on port ${port}`;
  const fds: number[] = [];
  for (const entry of Deno.readDirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/self/fd/${entry.name}`));
      if (m && inodes.has(m[1])) fds.push(Number(entry.name));
    } catch {
      // Closed meanwhile.
    }
  }
  if (!fds.length) return `no descriptor for the socket on port ${port}`;
  let lib;
  try {
    lib = Deno.dlopen("libc.so.6", {
      setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
    });
  } catch (err) {
    return `loading libc: ${(err as Error).message}`;
  }
  try {
    const one = new Int32Array([1]);
    for (const fd of fds) {
      if (lib.symbols.setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, one, 4) !== 0) {
        return `setsockopt(TCP_NODELAY) failed on descriptor ${fd}`;
      }
    }
  } finally {
    lib.close();
  }
  return undefined;
}

/** Inodes of the listening TCP sockets (IPv4 and IPv6) on `port`. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    let text: string;
    try {
      text = Deno.readTextFileSync(table);
    } catch {
      continue; // no IPv6
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (cols.length < 10 || cols[3] !== TCP_LISTEN) continue;
      if (cols[1].split(":").pop() === hexPort) inodes.add(cols[9]);
    }
  }
  return inodes;
}
