/**
 * IP addresses and CIDR ranges as numbers: parsing (strict: no leading zeros in IPv4 parts, no
 * zone), the canonical text form (IPv6 compressed as RFC 5952 says), and arithmetic within a
 * range. Used by Service validation and cluster IP allocation.
 *
 * @module
 */

export type IPFamily = "IPv4" | "IPv6";

/** An address: its family and its value (32 or 128 bits). */
export interface IP {
  family: IPFamily;
  value: bigint;
}

/** A range: the network address (host bits zero) and the prefix length. */
export interface CIDR {
  family: IPFamily;
  network: bigint;
  prefix: number;
  /** 32 or 128. */
  bits: number;
}

const V4_PART = /^(0|[1-9][0-9]{0,2})$/;
const V6_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseV4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const p of parts) {
    if (!V4_PART.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function parseV6(text: string): bigint | undefined {
  if (!text.includes(":")) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string): bigint[] | undefined => {
    if (half === "") return [];
    const out: bigint[] = [];
    const parts = half.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i === parts.length - 1 && p.includes(".")) {
        // A trailing dotted quad fills the last two groups.
        const v4 = parseV4(p);
        if (v4 === undefined) return undefined;
        out.push(v4 >> 16n, v4 & 0xffffn);
      } else if (V6_GROUP.test(p)) {
        out.push(BigInt(parseInt(p, 16)));
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
  let value = 0n;
  for (const g of [...head, ...Array(missing).fill(0n), ...tail]) value = (value << 16n) | g;
  return value;
}

/** Parses an IPv4 or IPv6 address; undefined when it is not one. */
export function parseIP(text: string): IP | undefined {
  const v4 = parseV4(text);
  if (v4 !== undefined) return { family: "IPv4", value: v4 };
  const v6 = parseV6(text);
  return v6 === undefined ? undefined : { family: "IPv6", value: v6 };
}

/** The canonical text of an address (`10.0.0.1`, `fd00::1`). */
export function formatIP(ip: IP): string {
  if (ip.family === "IPv4") {
    return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join(".");
  }
  const groups: number[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(Number((ip.value >> s) & 0xffffn));
  return formatIPv6Groups(groups);
}

/** The canonical text of an IPv6 address from its eight 16-bit groups (RFC 5952). */
export function formatIPv6Groups(groups: readonly number[]): string {
  // The longest run of two or more zero groups (the first of equal runs) becomes `::`.
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (gs: readonly number[]) => gs.map((g) => g.toString(16)).join(":");
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/** The canonical text of an address given as text, or undefined when it is not one. */
export function canonicalIP(text: string): string | undefined {
  const ip = parseIP(text);
  return ip && formatIP(ip);
}

/** Parses `address/prefix`; the host bits are cleared. Undefined when malformed. */
export function parseCIDR(text: string): CIDR | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const ip = parseIP(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) return undefined;
  const bits = ip.family === "IPv4" ? 32 : 128;
  const prefix = Number(prefixText);
  if (prefix > bits) return undefined;
  const hostBits = BigInt(bits - prefix);
  return { family: ip.family, network: (ip.value >> hostBits) << hostBits, prefix, bits };
}

/** `10.0.0.0/24`. */
export function formatCIDR(c: CIDR): string {
  return `${formatIP({ family: c.family, value: c.network })}/${c.prefix}`;
}

/** How many addresses the range holds. */
export function cidrSize(c: CIDR): bigint {
  return 1n << BigInt(c.bits - c.prefix);
}

/** Whether the range holds the address. */
export function cidrContains(c: CIDR, ip: IP): boolean {
  return ip.family === c.family && ip.value >= c.network && ip.value < c.network + cidrSize(c);
}
