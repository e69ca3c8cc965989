/**
 * Where the cluster-wide controllers run. On a store that several servers share (etcd3), with
 * `--leader-elect` (the default), only on the replica that holds the Lease
 * `--leader-elect-resource-namespace`/`--leader-elect-resource-name`: they start when it wins
 * the lease and stop when it loses it. On the file and memory stores, which one process owns,
 * or with `--leader-elect=false`, they run unconditionally, started here.
 */

import type { Logger } from "../../api/mod.ts";
import { ConfigError } from "../../config/mod.ts";
import {
  type ControllerSet,
  holderIdentity,
  JITTER_FACTOR,
  LeaderElector,
  LeaseLock,
} from "../../controllers/mod.ts";
import { leases } from "../../resources/mod.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";
import type { ApiRegistries } from "./registries.ts";

/** The stores more than one server may share: only there is a leader elected. */
const SHARED_STORES = ["etcd3"];

/**
 * Runs `cluster` unconditionally, or under leader election; resolves once it runs or, when
 * elected, after the first try for the lease (and once it runs, if that try won).
 */
export async function runClusterControllers(
  opts: StartOptions,
  api: ApiRegistries,
  cluster: ControllerSet,
  logger: Logger,
  resources: OpenResources,
): Promise<void> {
  // In a worker thread of `--workers`: the main thread runs them.
  if (opts.workerThread) return;
  const le = opts.leaderElection ?? {};
  if (!SHARED_STORES.includes(opts.storage ?? "file") || le.enabled === false) {
    resources.add("the cluster-wide controllers", () => cluster.stop());
    await cluster.start();
    return;
  }
  // The Lease is written through its registry even when `--runtime-config` does not serve it.
  const served = api.catalogue.lookup(leases.group, leases.version, leases.plural);
  const registry = (served && api.registries.get(served)) ?? api.newRegistry(leases, api.schemas);
  const leaseDurationMs = le.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = le.renewDeadlineMs ?? 10_000;
  const retryPeriodMs = le.retryPeriodMs ?? 2_000;
  // `platform serve` checked the flags; an embedder's options get the same rules.
  if (!(retryPeriodMs > 0 && retryPeriodMs * JITTER_FACTOR < renewDeadlineMs)) {
    throw new ConfigError(
      `leaderElection.retryPeriodMs: ${retryPeriodMs} must be above 0, and 1.2 times it below ` +
        `renewDeadlineMs (${renewDeadlineMs})`,
    );
  }
  if (!(renewDeadlineMs < leaseDurationMs)) {
    throw new ConfigError(
      `leaderElection.renewDeadlineMs: ${renewDeadlineMs} must be below leaseDurationMs ` +
        `(${leaseDurationMs})`,
    );
  }
  const elector = new LeaderElector({
    lock: new LeaseLock(
      registry,
      le.resourceNamespace ?? "platform-system",
      le.resourceName ?? "platform-controllers",
    ),
    identity: holderIdentity(),
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    onStartedLeading: () => cluster.start(),
    onStoppedLeading: () => cluster.stop(),
    logger,
  });
  resources.add("leader election", () => elector.stop());
  await elector.start();
}
