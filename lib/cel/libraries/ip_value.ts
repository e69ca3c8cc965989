/**
 * IP addresses and prefixes as Go's `net/netip` parses and prints them (what Kubernetes' IP and
 * CIDR libraries are built on): IPv4 in dotted decimal without leading zeros, IPv6 with `::`
 * and an optional dotted IPv4 tail, printed canonically (RFC 5952: lower case, the longest run
 * of two or more zero groups shortened). Zones and IPv4-mapped IPv6 addresses are refused, as
 * Kubernetes refuses them.
 */

import { formatIPv6Groups, parseIP as parseAddress } from "../../api/mod.ts";

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

/** The address's bytes (4 or 16), from the server's own parser (the same strict rules). */
function addressBytes(raw: string): Uint8Array | undefined {
  const ip = parseAddress(raw);
  if (!ip) return undefined;
  const n = ip.family === "IPv4" ? 4 : 16;
  const out = new Uint8Array(n);
  let v = ip.value;
  for (let k = n - 1; k >= 0; k--, v >>= 8n) out[k] = Number(v & 0xffn);
  return out;
}

/** Parses an address as Kubernetes' `ip()` does; throws with Kubernetes' messages. */
export function parseIP(raw: string): IPAddr {
  if (raw.includes("%")) {
    throw new Error(`IP address ${JSON.stringify(raw)} with zone value is not allowed`);
  }
  const bytes = addressBytes(raw);
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
