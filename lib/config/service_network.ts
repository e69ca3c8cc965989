/**
 * The Service network of `--service-cluster-ip-range` and `--service-node-port-range`: the
 * cluster IP ranges (one CIDR, or one per IP family) and the node port range, parsed and
 * checked as kube does. The allocator (lib/resources/service_ips.ts) works from it.
 *
 * @module
 */

import { cidrSize, formatCIDR, type IPFamily, parseCIDR } from "../api/mod.ts";
import { ConfigError } from "./config_error.ts";

/** kube's default `--service-cluster-ip-range`. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24";
/** kube's default `--service-node-port-range`. */
export const DEFAULT_SERVICE_NODE_PORT_RANGE = "30000-32767";

/** One family's range of cluster IPs. */
export interface IPRange {
  family: IPFamily;
  /** The CIDR as written canonically, e.g. `10.0.0.0/24`. */
  cidr: string;
  /** The first and last address handed out (the network address and, for IPv4, the broadcast
   * address are not). */
  first: bigint;
  last: bigint;
}

/** What allocation works from: one or two IP ranges (primary first) and the node ports. */
export interface ServiceNetwork {
  ranges: IPRange[];
  nodePorts: { min: number; max: number };
}

/**
 * Parses `--service-cluster-ip-range`: one CIDR, or an IPv4 and an IPv6 CIDR separated by a
 * comma (dual-stack; the first is the primary family). Ranges may hold at most 2^20 addresses,
 * as kube's allocator allows, and at least one besides the network (and broadcast) address.
 * @throws Error with the one-line reason
 */
export function parseServiceClusterIPRange(text: string): IPRange[] {
  const parts = text.split(",").map((s) => s.trim());
  if (parts.length > 2) throw new Error("may be one CIDR or two (one per IP family)");
  const ranges = parts.map((p) => {
    const c = parseCIDR(p);
    if (!c) throw new Error(`${JSON.stringify(p)} is not a CIDR (e.g. 10.0.0.0/24 or fd00::/108)`);
    const hostBits = c.bits - c.prefix;
    if (hostBits > 20) {
      throw new Error(
        `${p} is too large; for ${c.bits}-bit addresses, the mask must be >= ${c.bits - 20}`,
      );
    }
    const lastOffset = cidrSize(c) - (c.family === "IPv4" ? 2n : 1n);
    if (lastOffset < 1n) throw new Error(`${p} is too small to hold a Service IP`);
    return {
      family: c.family,
      cidr: formatCIDR(c),
      first: c.network + 1n,
      last: c.network + lastOffset,
    };
  });
  if (ranges.length === 2 && ranges[0].family === ranges[1].family) {
    throw new Error("two CIDRs must be of different IP families (one IPv4, one IPv6)");
  }
  return ranges;
}

/** Parses `--service-node-port-range`: `min-max` (or one port). */
export function parseNodePortRange(text: string): { min: number; max: number } {
  const m = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5}))?\s*$/.exec(text);
  const min = m ? Number(m[1]) : NaN;
  const max = m ? Number(m[2] ?? m[1]) : NaN;
  if (!(min >= 1 && max <= 65535 && min <= max)) {
    throw new Error(`${JSON.stringify(text)} is not a port range (e.g. 30000-32767)`);
  }
  return { min, max };
}

/** The network of the two flags (kube's defaults when absent).
 * @throws ConfigError naming the flag */
export function serviceNetwork(clusterIPRange?: string, nodePortRange?: string): ServiceNetwork {
  const flag = <T>(name: string, fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw ConfigError.at(name, err);
    }
  };
  return {
    ranges: flag(
      "--service-cluster-ip-range",
      () => parseServiceClusterIPRange(clusterIPRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE),
    ),
    nodePorts: flag(
      "--service-node-port-range",
      () => parseNodePortRange(nodePortRange ?? DEFAULT_SERVICE_NODE_PORT_RANGE),
    ),
  };
}
