/**
 * This process's TCP sockets as Linux shows them in /proc, and libc calls on their
 * descriptors: for the few socket options and operations Deno does not offer (TCP_NODELAY on
 * a listener, see nodelay.ts; shutting down a connection Deno holds, see connections.ts).
 *
 * /proc/self/net/tcp{,6} maps addresses to socket inodes; /proc/self/fd maps inodes to
 * descriptors. Linux only, and the libc calls need `--allow-ffi`.
 *
 * @module
 */

/** One row of /proc/self/net/tcp{,6}: addresses in its hex form, see {@link procAddress}. */
export interface ProcSocket {
  local: string;
  remote: string;
  /** `0A` listening, `01` established, … */
  state: string;
  inode: string;
}

/** Every TCP socket of this process's network namespace (IPv4 and IPv6). */
export function tcpSockets(): ProcSocket[] {
  const out: ProcSocket[] = [];
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
      if (cols.length < 10) continue;
      out.push({ local: cols[1], remote: cols[2], state: cols[3], inode: cols[9] });
    }
  }
  return out;
}

/** This process's descriptors of the sockets with these inodes. */
export function descriptorsOf(inodes: Set<string>): Map<string, number> {
  const fds = new Map<string, number>();
  if (!inodes.size) return fds;
  for (const entry of Deno.readDirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/self/fd/${entry.name}`));
      if (m && inodes.has(m[1])) fds.set(m[1], Number(entry.name));
    } catch {
      // Closed meanwhile.
    }
  }
  return fds;
}

/** The port as /proc writes it: 4 hex digits. */
export function procPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, "0");
}

/**
 * `address:port` as /proc writes it: the address's 32-bit words in host (little-endian) byte
 * order, in hex. IPv4 addresses of an IPv6 socket are written IPv4-mapped.
 */
export function procAddress(addr: Deno.NetAddr, ipv6Table: boolean): string {
  let bytes: number[];
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(addr.hostname);
  if (v4) {
    const quad = v4.slice(1).map(Number);
    bytes = ipv6Table ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...quad] : quad;
  } else {
    bytes = ipv6Bytes(addr.hostname);
  }
  let hex = "";
  for (let w = 0; w < bytes.length; w += 4) {
    for (let i = 3; i >= 0; i--) hex += bytes[w + i].toString(16).toUpperCase().padStart(2, "0");
  }
  return `${hex}:${procPort(addr.port)}`;
}

function ipv6Bytes(text: string): number[] {
  const [head, tail = ""] = text.replace(/^\[|\]$/g, "").split("::");
  const words = (s: string) => s ? s.split(":").map((w) => parseInt(w, 16)) : [];
  const h = words(head), t = words(tail);
  const all = [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill(0), ...t];
  return all.flatMap((w) => [w >> 8, w & 0xff]);
}

const SHUT_RDWR = 2;

type Libc = Deno.DynamicLibrary<{
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"]; result: "i32" };
  shutdown: { parameters: ["i32", "i32"]; result: "i32" };
}>;
let libc: Libc | undefined;

/** libc, opened once for the process's lifetime. @throws when FFI is not allowed */
export function openLibc(): Libc {
  libc ??= Deno.dlopen(
    "libc.so.6",
    {
      setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
      shutdown: { parameters: ["i32", "i32"], result: "i32" },
    } as const,
  );
  return libc;
}

/**
 * Shuts down (both directions) this process's connections with these endpoints, whoever holds
 * their descriptors: the holder then reads end-of-stream and closes them. Returns how many
 * were shut down.
 */
export function shutdownConnections(
  conns: { localAddr: Deno.NetAddr; remoteAddr: Deno.NetAddr }[],
): number {
  if (!conns.length || Deno.build.os !== "linux") return 0;
  const wanted = new Set<string>();
  for (const c of conns) {
    for (const v6 of [false, true]) {
      wanted.add(`${procAddress(c.localAddr, v6)} ${procAddress(c.remoteAddr, v6)}`);
    }
  }
  const inodes = new Set<string>();
  for (const s of tcpSockets()) {
    if (wanted.has(`${s.local} ${s.remote}`)) inodes.add(s.inode);
  }
  const lib = openLibc();
  let n = 0;
  for (const fd of descriptorsOf(inodes).values()) {
    if (lib.symbols.shutdown(fd, SHUT_RDWR) === 0) n++;
  }
  return n;
}
