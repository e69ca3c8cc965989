/**
 * Value parsers shared by flags and the configuration file: ports, counts, byte counts,
 * Go-style durations, booleans, comma-separated lists, enums, IP addresses, host names and
 * subject alternative names. Each throws an Error whose message says what is wrong with the
 * quoted value; the caller prefixes where the value came from (see `ConfigError.at`).
 *
 * @module
 */

import { quote } from "./config_error.ts";

/**
 * A port number 0-65535 (0 = pick a free port).
 *
 * @example
 * ```ts
 * parsePort("6443"); // 6443
 * ```
 */
export function parsePort(value: string | number): number {
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new Error(`${quote(value)} is not a port number (0-65535)`);
  }
  return n;
}

/** A non-negative integer. */
export function parseCount(value: string | number): number {
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`${quote(value)} is not a non-negative integer`);
  }
  return n;
}

/** A positive byte count (plain integer). */
export function parseByteCount(value: string | number): number {
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new Error(`${quote(value)} is not a positive number of bytes`);
  }
  return n;
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A Go-style duration (`300ms`, `30s`, `5m`, `1h30m`, `1.5h`, `0`) in milliseconds.
 *
 * @example
 * ```ts
 * parseDuration("1m30s"); // 90000
 * ```
 */
export function parseDuration(value: string): number {
  const text = value.trim();
  if (text === "0") return 0;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let ms = 0;
  let pos = 0;
  while (pos < text.length) {
    part.lastIndex = pos;
    const m = part.exec(text);
    if (!m) {
      throw new Error(`${quote(value)} is not a duration (like "30s", "5m" or "1h30m")`);
    }
    ms += Number(m[1]) * DURATION_UNITS[m[2]];
    pos = part.lastIndex;
  }
  if (text.length === 0 || !Number.isFinite(ms)) {
    throw new Error(`${quote(value)} is not a duration (like "30s", "5m" or "1h30m")`);
  }
  return Math.round(ms);
}

/** A duration for `--help` and logs: `90000` → `1m30s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let out = "";
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h) out += `${h}h`;
  if (m) out += `${m}m`;
  if (s) out += `${s}s`;
  return out;
}

/** `true`/`false`, case-insensitive. */
export function parseBool(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  throw new Error(`${quote(value)} is not a boolean (true or false)`);
}

/** Split a comma-separated list, trimming items and dropping empty ones. */
export function splitList(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
}

/** One of the given values. */
export function parseEnum<T extends string>(value: string, values: readonly T[]): T {
  if ((values as readonly string[]).includes(value)) return value as T;
  throw new Error(
    `${quote(value)} is not one of ${values.map((v) => JSON.stringify(v)).join(", ")}`,
  );
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * The canonical text of an IP address (IPv6 compressed and lower-case), or `undefined` when
 * `text` is not an IPv4 or IPv6 address.
 *
 * @example
 * ```ts
 * normalizeIp("0:0::1"); // "::1"
 * normalizeIp("example.com"); // undefined
 * ```
 */
export function normalizeIp(text: string): string | undefined {
  if (IPV4.test(text)) return text;
  if (!text.includes(":") || /[^0-9a-f:.]/i.test(text)) return undefined;
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** A DNS name, optionally with a leading `*.` wildcard label when `wildcard` is set. */
export function isDnsName(text: string, opts: { wildcard?: boolean } = {}): boolean {
  const name = opts.wildcard && text.startsWith("*.") ? text.slice(2) : text;
  if (name.length === 0 || name.length > 253) return false;
  return name.replace(/\.$/, "").split(".").every((l) => DNS_LABEL.test(l));
}

/** A listen address: an IP address or a DNS name. Returns it normalized. */
export function parseHost(value: string): string {
  const text = value.trim();
  const ip = normalizeIp(text);
  if (ip !== undefined) return ip;
  if (isDnsName(text)) return text.toLowerCase();
  throw new Error(`${quote(value)} is not an IP address or DNS name`);
}

/** A subject alternative name: an IP address or a DNS name (wildcards allowed). */
export function parseSan(value: string): string {
  const text = value.trim();
  const ip = normalizeIp(text);
  if (ip !== undefined) return ip;
  if (isDnsName(text, { wildcard: true })) return text.toLowerCase();
  throw new Error(`${quote(value)} is not an IP address or DNS name`);
}
