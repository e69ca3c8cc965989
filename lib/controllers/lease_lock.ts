/**
 * The resource lock of leader election: a `coordination.platform.io/v1` Lease read and written
 * through its registry, as client-go's LeaseLock does. The lock remembers the Lease it last
 * read or wrote, and every update is conditional on that Lease's resourceVersion, so of two
 * replicas writing over the same version only one succeeds (the other gets a 409).
 */

import { rfc3339Micro, StatusError } from "../api/mod.ts";
import type { KubeObject, ResourceRegistry, StrategyContext } from "../registry/mod.ts";

/** What the Lease's spec says about the leader (client-go's LeaderElectionRecord). */
export interface LeaderElectionRecord {
  /** Who holds the lease; empty when it was released. */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** When the holder acquired it, RFC 3339 with microseconds. */
  acquireTime: string;
  /** When the holder last renewed it. */
  renewTime: string;
  /** How many times the lease changed hands. */
  leaseTransitions: number;
}

/** Where the election record is kept. */
export interface ResourceLock {
  /** The stored record; undefined when there is none yet. */
  get(): Promise<LeaderElectionRecord | undefined>;
  /** Creates the record; fails when one exists. */
  create(record: LeaderElectionRecord): Promise<void>;
  /** Replaces the record last read or written; fails when it changed since. */
  update(record: LeaderElectionRecord): Promise<void>;
  /** `namespace/name`, for logs. */
  describe(): string;
}

/** Who writes the Lease, and its field manager. */
const CONTEXT: StrategyContext = {
  user: { username: "system:platform-controller-manager", groups: ["system:authenticated"] },
};
const MANAGER = "platform-controller-manager";

/** A {@link ResourceLock} on the Lease `namespace/name` of `leases`. */
export class LeaseLock implements ResourceLock {
  readonly #leases: ResourceRegistry;
  readonly #namespace: string;
  readonly #name: string;
  /** The Lease as last read or written. */
  #lease?: KubeObject;

  constructor(leases: ResourceRegistry, namespace: string, name: string) {
    this.#leases = leases;
    this.#namespace = namespace;
    this.#name = name;
  }

  describe(): string {
    return `${this.#namespace}/${this.#name}`;
  }

  async get(): Promise<LeaderElectionRecord | undefined> {
    try {
      this.#lease = await this.#leases.get(this.#namespace, this.#name);
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) return undefined;
      throw err;
    }
    return recordOf(this.#lease);
  }

  async create(record: LeaderElectionRecord): Promise<void> {
    const lease = {
      apiVersion: this.#leases.apiVersion,
      kind: "Lease",
      metadata: { name: this.#name, namespace: this.#namespace },
      spec: specOf(record),
    };
    const res = await this.#leases.create(this.#namespace, lease, CONTEXT, { manager: MANAGER });
    this.#lease = res.object;
  }

  async update(record: LeaderElectionRecord): Promise<void> {
    if (!this.#lease) throw new Error(`lease ${this.describe()} not read yet`);
    // The resourceVersion of the Lease last seen makes the write conditional (409 if stale).
    const next = { ...structuredClone(this.#lease), spec: specOf(record) };
    const res = await this.#leases.update(this.#namespace, this.#name, next, CONTEXT, {
      manager: MANAGER,
    });
    this.#lease = res.object;
  }
}

/** The record a Lease holds; absent fields read as empty, as client-go reads them. */
export function recordOf(lease: KubeObject): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: typeof spec.holderIdentity === "string" ? spec.holderIdentity : "",
    leaseDurationSeconds: Number(spec.leaseDurationSeconds ?? 0),
    acquireTime: typeof spec.acquireTime === "string" ? spec.acquireTime : "",
    renewTime: typeof spec.renewTime === "string" ? spec.renewTime : "",
    leaseTransitions: Number(spec.leaseTransitions ?? 0),
  };
}

function specOf(record: LeaderElectionRecord): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  if (record.acquireTime) spec.acquireTime = record.acquireTime;
  if (record.renewTime) spec.renewTime = record.renewTime;
  return spec;
}

/** A time as the Lease's MicroTime fields hold it. */
export function microTime(ms: number): string {
  return rfc3339Micro(new Date(ms));
}
