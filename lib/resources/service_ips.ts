/**
 * Allocation of Service cluster IPs (from `--service-cluster-ip-range`) and node ports (from
 * `--service-node-port-range`), kept in the store itself: one record per allocated value,
 * `/registry/ranges/serviceips/<ip>` or `/registry/ranges/servicenodeports/<port>`, created only
 * if absent. A create that finds the key taken has lost the value to another request, on this
 * server or on another one sharing the store, so concurrent creates never share a value and
 * allocations survive restarts. Records are released when their Service goes or its write
 * fails; {@link ServiceAllocator.reconcile} repairs what a crash in between leaves behind.
 *
 * @module
 */

import { formatIP, type IP, type IPFamily, parseIP } from "../api/mod.ts";
import { isStoreError, type Store } from "../storage/mod.ts";
import type { KubeObject } from "../registry/mod.ts";

const IP_PREFIX = "/registry/ranges/serviceips/";
const PORT_PREFIX = "/registry/ranges/servicenodeports/";

// The two flags' parsing lives with the configuration (lib/config/service_network.ts).
export {
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  DEFAULT_SERVICE_NODE_PORT_RANGE,
  type IPRange,
  parseNodePortRange,
  parseServiceClusterIPRange,
  type ServiceNetwork,
  serviceNetwork,
} from "../config/mod.ts";
import { type IPRange, type ServiceNetwork, serviceNetwork } from "../config/mod.ts";

/** Who holds an allocated value (kept in its record, for people and for repair). */
export interface Holder {
  namespace: string;
  name: string;
}

interface AllocationRecord extends Holder {
  /** When the record was written (ms since the epoch): repair leaves young records alone. */
  at: number;
}

/** Why a requested value cannot be had. */
export type Refusal = "allocated" | "outOfRange";

/** A pool of values kept as store records under one prefix. */
class StorePool {
  readonly #store: Store;
  readonly #prefix: string;
  /** Candidates: offsets 0 ..< size; `reserved` offsets are handed out only on request. */
  readonly size: bigint;
  readonly #reserved: bigint;
  readonly #valueAt: (offset: bigint) => string;
  /** The offset of a value of this pool (records of other pools may share the prefix). */
  readonly #offsetOf: (value: string) => bigint | undefined;

  constructor(
    store: Store,
    prefix: string,
    size: bigint,
    reserved: bigint,
    valueAt: (offset: bigint) => string,
    offsetOf: (value: string) => bigint | undefined,
  ) {
    this.#store = store;
    this.#prefix = prefix;
    this.size = size;
    this.#reserved = reserved;
    this.#valueAt = valueAt;
    this.#offsetOf = offsetOf;
  }

  key(value: string): string {
    return this.#prefix + value;
  }

  /** Takes `value` for `holder`; false when a record exists. A dry run only checks. */
  async take(value: string, holder: Holder, dryRun: boolean): Promise<boolean> {
    if (dryRun) return (await this.#store.get(this.key(value))) === undefined;
    const record: AllocationRecord = { ...holder, at: Date.now() };
    try {
      await this.#store.create(this.key(value), JSON.stringify(record));
      return true;
    } catch (err) {
      if (isStoreError(err, "KeyExists")) return false;
      throw err;
    }
  }

  /** Takes any free value, at random; undefined when the pool is full. */
  async takeNext(holder: Holder, dryRun: boolean): Promise<string | undefined> {
    for (let round = 0; round < 8; round++) {
      const taken = new Set((await this.records()).keys());
      let used = 0n;
      for (const v of taken) {
        const offset = this.#offsetOf(v);
        if (offset !== undefined && offset >= this.#reserved) used++;
      }
      const free = this.size - this.#reserved - used;
      if (free <= 0n) return undefined;
      // Random probes first; a nearly full pool is scanned from a random point.
      const pick = (): string | undefined => {
        for (let i = 0; i < 32; i++) {
          const v = this.#valueAt(this.#reserved + randomBelow(this.size - this.#reserved));
          if (!taken.has(v)) return v;
        }
        const span = this.size - this.#reserved;
        const start = randomBelow(span);
        for (let i = 0n; i < span; i++) {
          const v = this.#valueAt(this.#reserved + (start + i) % span);
          if (!taken.has(v)) return v;
        }
        return undefined;
      };
      for (let tries = 0; tries < 16; tries++) {
        const v = pick();
        if (v === undefined) break;
        if (await this.take(v, holder, dryRun)) return v;
        taken.add(v); // lost to a concurrent request
      }
    }
    return undefined;
  }

  async release(value: string): Promise<void> {
    try {
      await this.#store.delete(this.key(value));
    } catch (err) {
      if (!isStoreError(err, "NotFound")) throw err;
    }
  }

  /** Every record: value -> record and its revision. */
  async records(): Promise<Map<string, { record: AllocationRecord; revision: number }>> {
    const out = new Map<string, { record: AllocationRecord; revision: number }>();
    const res = await this.#store.list(this.#prefix);
    for (const kv of res.items) {
      let record: AllocationRecord;
      try {
        record = JSON.parse(kv.value);
      } catch {
        record = { namespace: "", name: "", at: 0 };
      }
      out.set(kv.key.slice(this.#prefix.length), { record, revision: kv.modRevision });
    }
    return out;
  }

  async releaseIfUnchanged(value: string, revision: number): Promise<void> {
    try {
      await this.#store.delete(this.key(value), revision);
    } catch (err) {
      if (!isStoreError(err, "NotFound") && !isStoreError(err, "Conflict")) throw err;
    }
  }
}

/** A uniform random bigint in [0, n). */
function randomBelow(n: bigint): bigint {
  if (n <= 0n) return 0n;
  if (n <= 0x100000000n) return BigInt(Math.floor(Math.random() * Number(n)));
  const words = new Uint32Array(4);
  crypto.getRandomValues(words);
  return words.reduce((acc, w) => (acc << 32n) | BigInt(w), 0n) % n;
}

/** What {@link ServiceAllocator.reconcile} did. */
export interface ReconcileReport {
  /** Records without a Service, released. */
  released: string[];
  /** Values Services hold without a record, recorded. */
  recorded: string[];
  /** Values held by two Services (only the first keeps the record). */
  duplicates: string[];
}

/** Cluster IPs and node ports of Services, allocated in the store. */
export class ServiceAllocator {
  readonly network: ServiceNetwork;
  readonly #ips = new Map<IPFamily, { range: IPRange; pool: StorePool }>();
  readonly #ports: StorePool;

  constructor(store: Store, network: ServiceNetwork = serviceNetwork()) {
    this.network = network;
    for (const range of network.ranges) {
      const size = range.last - range.first + 1n;
      // The first address is the `kubernetes` Service's: taken only when asked for by value.
      const pool = new StorePool(
        store,
        IP_PREFIX,
        size,
        1n,
        (offset) => formatIP({ family: range.family, value: range.first + offset }),
        (value) => {
          const ip = parseIP(value);
          return ip && this.inRange(ip) && ip.family === range.family
            ? ip.value - range.first
            : undefined;
        },
      );
      this.#ips.set(range.family, { range, pool });
    }
    const { min, max } = network.nodePorts;
    this.#ports = new StorePool(
      store,
      PORT_PREFIX,
      BigInt(max - min + 1),
      0n,
      (offset) => String(min + Number(offset)),
      (value) => {
        const port = Number(value);
        return port >= min && port <= max ? BigInt(port - min) : undefined;
      },
    );
  }

  /** The configured IP families, primary first. */
  get families(): IPFamily[] {
    return this.network.ranges.map((r) => r.family);
  }

  /** The range of a family, if configured. */
  range(family: IPFamily): IPRange | undefined {
    return this.#ips.get(family)?.range;
  }

  /** The first address of the primary range: the `kubernetes` Service's cluster IP. */
  firstIP(): string {
    const r = this.network.ranges[0];
    return formatIP({ family: r.family, value: r.first });
  }

  /** Whether `ip` lies in the configured range of its family. */
  inRange(ip: IP): boolean {
    const r = this.#ips.get(ip.family)?.range;
    return r !== undefined && ip.value >= r.first && ip.value <= r.last;
  }

  /** Takes the given cluster IP (canonical text) for a Service. */
  async allocateIP(ip: string, holder: Holder, dryRun = false): Promise<Refusal | undefined> {
    const parsed = parseIP(ip);
    if (!parsed || !this.inRange(parsed)) return "outOfRange";
    const taken = await this.#ips.get(parsed.family)!.pool.take(ip, holder, dryRun);
    return taken ? undefined : "allocated";
  }

  /** Takes a free cluster IP of the family; undefined when the range is full. */
  allocateNextIP(family: IPFamily, holder: Holder, dryRun = false): Promise<string | undefined> {
    return this.#ips.get(family)!.pool.takeNext(holder, dryRun);
  }

  async releaseIP(ip: string): Promise<void> {
    const parsed = parseIP(ip);
    if (parsed && this.inRange(parsed)) await this.#ips.get(parsed.family)!.pool.release(ip);
  }

  /** Takes the given node port for a Service. */
  async allocateNodePort(
    port: number,
    holder: Holder,
    dryRun = false,
  ): Promise<Refusal | undefined> {
    const { min, max } = this.network.nodePorts;
    if (port < min || port > max) return "outOfRange";
    return await this.#ports.take(String(port), holder, dryRun) ? undefined : "allocated";
  }

  /** Takes a free node port; undefined when the range is full. */
  async allocateNextNodePort(holder: Holder, dryRun = false): Promise<number | undefined> {
    const port = await this.#ports.takeNext(holder, dryRun);
    return port === undefined ? undefined : Number(port);
  }

  async releaseNodePort(port: number): Promise<void> {
    const { min, max } = this.network.nodePorts;
    if (port >= min && port <= max) await this.#ports.release(String(port));
  }

  /**
   * Brings the records in line with the Services: a record no Service holds is released once
   * older than `graceMs` (a younger one may belong to a create still under way), and a value a
   * Service holds without a record gets one.
   */
  async reconcile(services: KubeObject[], graceMs: number): Promise<ReconcileReport> {
    const report: ReconcileReport = { released: [], recorded: [], duplicates: [] };
    const wantedIPs = new Map<string, Holder>();
    const wantedPorts = new Map<string, Holder>();
    for (const svc of services) {
      const holder = { namespace: svc.metadata?.namespace ?? "", name: svc.metadata?.name ?? "" };
      const want = (map: Map<string, Holder>, value: string) => {
        if (map.has(value)) report.duplicates.push(value);
        else map.set(value, holder);
      };
      for (const ip of clusterIPsOf(svc)) {
        const parsed = parseIP(ip);
        if (parsed && this.inRange(parsed)) want(wantedIPs, formatIP(parsed));
      }
      for (const port of nodePortsOf(svc)) {
        const { min, max } = this.network.nodePorts;
        if (port >= min && port <= max) want(wantedPorts, String(port));
      }
    }
    const now = Date.now();
    const pools: [StorePool, Map<string, Holder>][] = [[this.#ports, wantedPorts]];
    // All families share one prefix: list it once.
    const ipPool = this.#ips.values().next().value?.pool;
    if (ipPool) pools.unshift([ipPool, wantedIPs]);
    for (const [pool, wanted] of pools) {
      const records = await pool.records();
      for (const [value, { record, revision }] of records) {
        if (wanted.has(value) || now - record.at < graceMs) continue;
        await pool.releaseIfUnchanged(value, revision);
        report.released.push(value);
      }
      for (const [value, holder] of wanted) {
        if (records.has(value)) continue;
        if (await pool.take(value, holder, false)) report.recorded.push(value);
      }
    }
    return report;
  }
}

/** The cluster IPs a Service holds (none for ExternalName and headless Services). */
export function clusterIPsOf(svc: KubeObject): string[] {
  const spec = svc.spec ?? {};
  if (spec.type === "ExternalName") return [];
  const ips: unknown[] = Array.isArray(spec.clusterIPs)
    ? spec.clusterIPs
    : spec.clusterIP
    ? [spec.clusterIP]
    : [];
  return ips.filter((ip): ip is string => typeof ip === "string" && ip !== "" && ip !== "None");
}

/** The node ports a Service holds (its ports' and the health-check one). */
export function nodePortsOf(svc: KubeObject): number[] {
  const spec = svc.spec ?? {};
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  const out = new Set<number>();
  for (const p of ports) {
    if (Number.isInteger(p?.nodePort) && p.nodePort > 0) out.add(p.nodePort);
  }
  if (Number.isInteger(spec.healthCheckNodePort) && spec.healthCheckNodePort > 0) {
    out.add(spec.healthCheckNodePort);
  }
  return [...out];
}
