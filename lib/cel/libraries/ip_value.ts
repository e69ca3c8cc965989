/**
 * IP addresses and prefixes as Go's `net/netip` parses and prints them (what Kubernetes' IP and
 * CIDR libraries are built on): IPv4 in dotted decimal without leading zeros, IPv6 with `::`
 * and an optional dotted IPv4 tail, printed canonically (RFC 5952: lower case, the longest run
 * of two or more zero groups shortened). Zones and IPv4-mapped IPv6 addresses are refused, as
 * Kubernetes refuses them.
 */

import { formatIPv6Groups } from "../../api/mod.ts";

export class IPAddr {
  /** 4 or 16 bytes. */
  constructor(readonly bytes: Uint8Array) {}

  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6;
  }

  toString(): string {
    const b = this.bytes;
    if (b.length === 4) return b.join(".");
    const groups = Array.from({ length: 8 }, (_, i) => (b[2 * i] << 8) | b[2 * i + 1]);
    return formatIPv6Groups(groups);
  }

  isUnspecified(): boolean {
    return this.bytes.every((x) => x === 0);
  }

  isLoopback(): boolean {
    const b = this.bytes;
    return b.length === 4 ? b[0] === 127 : b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  }

  isMulticast(): boolean {
    const b = this.bytes;
    return b.length === 4 ? (b[0] & 0xf0) === 0xe0 : b[0] === 0xff;
  }

  isLinkLocalMulticast(): boolean {
    const b = this.bytes;
    return b.length === 4
      ? b[0] === 224 && b[1] === 0 && b[2] === 0
      : b[0] === 0xff && (b[1] & 0x0f) === 0x02;
  }

  isLinkLocalUnicast(): boolean {
    const b = this.bytes;
    return b.length === 4 ? b[0] === 169 && b[1] === 254 : b[0] === 0xfe && (b[1] & 0xc0) === 0x80;
  }

  isGlobalUnicast(): boolean {
    const b = this.bytes;
    if (b.length === 4 && b.every((x) => x === 255)) return false;
    return !this.isUnspecified() && !this.isLoopback() && !this.isMulticast() &&
      !this.isLinkLocalUnicast();
  }
}

function parseIPv4(s: string): Uint8Array | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === "0") || Number(p) > 255) {
      return undefined;
    }
    out[i] = Number(p);
  }
  return out;
}

function parseIPv6(s: string): Uint8Array | undefined {
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseIPv4(item);
        if (!v4) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(item)) {
        out.push(parseInt(item, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** Parses an address as Kubernetes' `ip()` does; throws with Kubernetes' messages. */
export function parseIP(raw: string): IPAddr {
  if (raw.includes("%")) {
    throw new Error(`IP address ${JSON.stringify(raw)} with zone value is not allowed`);
  }
  const bytes = raw.includes(":") ? parseIPv6(raw) : parseIPv4(raw);
  if (!bytes) {
    throw new Error(
      `IP Address ${JSON.stringify(raw)} parse error during conversion from string: ParseAddr(${
        JSON.stringify(raw)
      }): unable to parse IP`,
    );
  }
  if (
    bytes.length === 16 && bytes.slice(0, 10).every((x) => x === 0) && bytes[10] === 0xff &&
    bytes[11] === 0xff
  ) {
    throw new Error(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  }
  return new IPAddr(bytes);
}

export class Prefix {
  constructor(readonly addr: IPAddr, readonly bits: number) {}

  toString(): string {
    return `${this.addr}/${this.bits}`;
  }

  /** The network: the address with the bits after the prefix cleared. */
  masked(): Prefix {
    const b = new Uint8Array(this.addr.bytes);
    for (let i = 0; i < b.length * 8; i++) {
      if (i >= this.bits) b[i >> 3] &= ~(0x80 >> (i & 7));
    }
    return new Prefix(new IPAddr(b), this.bits);
  }

  containsIP(ip: IPAddr): boolean {
    if (ip.family !== this.addr.family) return false;
    return new Prefix(ip, this.bits).masked().toString() === this.masked().toString();
  }

  containsPrefix(other: Prefix): boolean {
    return other.bits >= this.bits && this.containsIP(other.addr);
  }
}

/** Parses a prefix as Kubernetes' `cidr()` does; throws with Kubernetes' messages. */
export function parseCIDR(raw: string): Prefix {
  const fail = (why: string) =>
    new Error(
      `network address parse error during conversion from string: netip.ParsePrefix(${
        JSON.stringify(raw)
      }): ${why}`,
    );
  const slash = raw.lastIndexOf("/");
  if (slash < 0) throw fail("no '/'");
  const addrText = raw.slice(0, slash);
  const bitsText = raw.slice(slash + 1);
  if (addrText.includes("%")) throw fail("IPv6 zones cannot be present in a prefix");
  let addr: IPAddr;
  try {
    addr = parseIP(addrText);
  } catch (err) {
    if ((err as Error).message.startsWith("IPv4-mapped")) {
      throw new Error(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
    }
    throw fail(`ParseAddr(${JSON.stringify(addrText)}): unable to parse IP`);
  }
  const max = addr.family === 4 ? 32 : 128;
  if (!/^(0|[1-9]\d*)$/.test(bitsText) || Number(bitsText) > max) {
    throw fail(`bad bits after slash: ${JSON.stringify(bitsText)}`);
  }
  return new Prefix(addr, Number(bitsText));
}
