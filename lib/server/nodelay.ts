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
 * caller falls back to streaming larger bodies (`BodyWriting` in respond.ts).
 */

import { descriptorsOf, openLibc, procPort, tcpSockets } from "./proc_sockets.ts";

const IPPROTO_TCP = 6;
const TCP_NODELAY = 1;
const TCP_LISTEN = "0A";

/** Sets TCP_NODELAY on this process's listening TCP socket on `port`. Returns why not, or
 * undefined on success. */
export function setListenerNoDelay(port: number): string | undefined {
  if (Deno.build.os !== "linux") return `not supported on ${Deno.build.os}`;
  const inodes = new Set<string>();
  try {
    const suffix = `:${procPort(port)}`;
    for (const s of tcpSockets()) {
      if (s.state === TCP_LISTEN && s.local.endsWith(suffix)) inodes.add(s.inode);
    }
  } catch (err) {
    return `reading /proc/self/net: ${(err as Error).message}`;
  }
  if (!inodes.size) return `no listening socket on port ${port}`;
  const fds = [...descriptorsOf(inodes).values()];
  if (!fds.length) return `no descriptor for the socket on port ${port}`;
  let lib;
  try {
    lib = openLibc();
  } catch (err) {
    return `loading libc: ${(err as Error).message}`;
  }
  const one = new Int32Array([1]);
  for (const fd of fds) {
    if (lib.symbols.setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, one, 4) !== 0) {
      return `setsockopt(TCP_NODELAY) failed on descriptor ${fd}`;
    }
  }
  return undefined;
}
