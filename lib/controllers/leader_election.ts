/**
 * Leader election with client-go's semantics (k8s.io/client-go/tools/leaderelection), over a
 * {@link ResourceLock} (the Lease of lease_lock.ts):
 *
 * - A candidate acquires the lease when there is none, when it was released (no holder), or
 *   when the record it observed has not changed for the record's `leaseDurationSeconds`,
 *   measured on this replica's clock from when it observed that record (clocks of different
 *   replicas are never compared). It tries every retry period, with client-go's 1.2 jitter.
 * - The leader renews every retry period. A renewal that fails is retried every retry period
 *   until the renew deadline (from the last successful renewal) has passed; then, or as soon
 *   as it sees another holder, it has lost leadership: its controllers stop and it campaigns
 *   again. Every write is conditional on the Lease's resourceVersion, so of two replicas only
 *   one can win a round.
 * - Taking over from another holder increments `leaseTransitions`; renewing keeps
 *   `acquireTime` and `leaseTransitions`.
 * - A graceful stop stops the controllers, then releases the lease (client-go's
 *   ReleaseOnCancel: no holder, `leaseDurationSeconds` 1), so another replica takes over at
 *   its next try instead of after the lease duration.
 *
 * Unlike kube-controller-manager, which exits when it loses leadership, the elector stops the
 * leader's controllers and campaigns again, in the same process.
 */

import type { Clock, Logger } from "../api/mod.ts";
import { type LeaderElectionRecord, microTime, type ResourceLock } from "./lease_lock.ts";

/** client-go's JitterFactor: a candidate's retry waits up to 1.2 retry periods more. */
export const JITTER_FACTOR = 1.2;

/** A clock that never goes back: lease expiry is measured on it. */
const monotonicClock: Clock = { now: () => performance.timeOrigin + performance.now() };

export interface LeaderElectorOptions {
  lock: ResourceLock;
  /** This replica's holder identity, unique per process: `<hostname>_<uuid>`. */
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Starts what the leader runs; resolves once it runs. A rejection gives the lease up. */
  onStartedLeading(): Promise<void>;
  /** Stops it; called once after each onStartedLeading has settled, whatever its outcome. */
  onStoppedLeading(): Promise<void>;
  logger: Logger;
  /** @default a monotonic clock */
  clock?: Clock;
  /** @default Math.random */
  random?: () => number;
}

/** Why a term of leadership ended. */
type TermEnd = "stopped" | "lost" | "start-failed";

export class LeaderElector {
  readonly #o: LeaderElectorOptions;
  readonly #clock: Clock;
  readonly #abort = new AbortController();
  /** The record last read or written, and when (on this replica's clock) it last changed. */
  #observed?: LeaderElectionRecord;
  #observedRaw = "";
  #observedTime = 0;
  /** Lock operations run one at a time: a renewal given up at its deadline may still run. */
  #lockOps: Promise<unknown> = Promise.resolve();
  #loop?: Promise<void>;
  #leading = false;

  constructor(o: LeaderElectorOptions) {
    this.#o = o;
    this.#clock = o.clock ?? monotonicClock;
  }

  get identity(): string {
    return this.#o.identity;
  }

  /** Whether the record last observed names this replica as the holder. */
  isLeader(): boolean {
    return this.#observed?.holderIdentity === this.#o.identity;
  }

  /** Whether this replica leads now (its controllers were started and not yet stopped). */
  get leading(): boolean {
    return this.#leading;
  }

  /**
   * Campaigns in the background until {@link stop}; resolves after the first attempt, and when
   * that one wins, once the leader's controllers have started.
   */
  start(): Promise<void> {
    let firstRound!: () => void;
    const first = new Promise<void>((resolve) => firstRound = resolve);
    this.#loop = this.#campaign(firstRound)
      .catch((err) => this.#o.logger.error("leader election ended", err))
      .finally(() => firstRound());
    return first;
  }

  /** Stops campaigning; a leader stops its controllers, then releases the lease. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }

  async #campaign(firstRound: () => void): Promise<void> {
    const { logger, lock, identity } = this.#o;
    const signal = this.#abort.signal;
    let first = true;
    while (!signal.aborted) {
      // A stop does not wait for a try that hangs (etcd unreachable, say).
      if (!(await untilAborted(this.tryAcquireOrRenew(), signal))) {
        if (first) firstRound();
        first = false;
        await sleep(this.#jittered(this.#o.retryPeriodMs), signal);
        continue;
      }
      if (signal.aborted) break;
      this.#leading = true;
      logger.info(`became leader: lease ${lock.describe()} held by ${identity}`);
      let startError: unknown;
      // Ends the term early: the stop, or controllers that failed to start.
      const term = new AbortController();
      const endTerm = () => term.abort();
      signal.addEventListener("abort", endTerm);
      const started = this.#o.onStartedLeading().then(
        () => undefined,
        (err) => {
          startError = err ?? new Error("failed");
          endTerm();
        },
      );
      if (first) started.then(firstRound);
      first = false;
      // Renewals go on while the controllers start, which may take a while.
      const end = await this.#renewWhileLeading(
        term.signal,
        () => signal.aborted ? "stopped" : startError !== undefined ? "start-failed" : undefined,
      );
      signal.removeEventListener("abort", endTerm);
      await started;
      this.#leading = false;
      await this.#o.onStoppedLeading().catch((err) =>
        logger.error("stopping the leader's controllers", err)
      );
      if (end === "stopped") break;
      if (end === "start-failed") {
        logger.error("lost leadership: the leader's controllers did not start", startError);
        // Another replica may do better; this one tries again after a retry period.
        await this.#bounded(this.release(), this.#o.renewDeadlineMs);
        await sleep(this.#jittered(this.#o.retryPeriodMs), signal);
      } else {
        logger.info(`lost leadership: lease ${lock.describe()} not renewed in time`);
      }
    }
    // A graceful stop: hand over at once rather than after the lease duration.
    if (this.isLeader()) await this.#bounded(this.release(), this.#o.renewDeadlineMs);
  }

  /** Renews every retry period until the stop, a lost lease or a failed start. */
  async #renewWhileLeading(
    term: AbortSignal,
    ended: () => TermEnd | undefined,
  ): Promise<TermEnd> {
    const { renewDeadlineMs, retryPeriodMs } = this.#o;
    let lastRenewal = this.#observedTime;
    for (;;) {
      await sleep(retryPeriodMs, term);
      if (term.aborted) return ended() ?? "stopped";
      const attempt = this.#clock.now();
      const left = lastRenewal + renewDeadlineMs - attempt;
      if (left <= 0) return "lost";
      const renewed = await this.#bounded(this.tryAcquireOrRenew(), left);
      if (term.aborted) return ended() ?? "stopped";
      if (renewed) {
        lastRenewal = attempt;
        continue;
      }
      // Someone else holds it now: nothing to wait for.
      if (this.#observed && !this.isLeader()) return "lost";
      if (this.#clock.now() >= lastRenewal + renewDeadlineMs) return "lost";
    }
  }

  /**
   * One round of client-go's tryAcquireOrRenew: true when this replica holds the lease after
   * it (acquired or renewed), false when another holds a valid lease or a write lost a race.
   */
  tryAcquireOrRenew(): Promise<boolean> {
    const op = this.#lockOps.then(() => this.#tryAcquireOrRenew());
    this.#lockOps = op.catch(() => {});
    return op;
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { lock, identity, logger } = this.#o;
    const now = this.#clock.now();
    const wanted: LeaderElectionRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    // The leader renews over the record it wrote last, without reading it first.
    if (this.isLeader() && this.#leaseValid(now)) {
      const old = this.#observed!;
      const renewal = { ...wanted, acquireTime: old.acquireTime };
      renewal.leaseTransitions = old.leaseTransitions;
      try {
        await lock.update(renewal);
        this.#setObserved(renewal, now);
        return true;
      } catch (err) {
        this.#writeFailed("renew", err);
      }
    }
    let stored: LeaderElectionRecord | undefined;
    try {
      stored = await lock.get();
    } catch (err) {
      logger.warn(`lease ${lock.describe()}: cannot read it`, err);
      return false;
    }
    if (!stored) {
      try {
        await lock.create(wanted);
      } catch (err) {
        this.#writeFailed("create", err);
        return false;
      }
      this.#setObserved(wanted, now);
      return true;
    }
    const raw = JSON.stringify(stored);
    if (raw !== this.#observedRaw) this.#setObserved(stored, now);
    if (stored.holderIdentity !== "" && this.#leaseValid(now) && !this.isLeader()) return false;
    if (this.isLeader()) {
      wanted.acquireTime = stored.acquireTime;
      wanted.leaseTransitions = stored.leaseTransitions;
    } else {
      wanted.leaseTransitions = stored.leaseTransitions + 1;
    }
    try {
      await lock.update(wanted);
    } catch (err) {
      this.#writeFailed("update", err);
      return false;
    }
    this.#setObserved(wanted, now);
    return true;
  }

  /** Gives the lease up if this replica holds it; true when it no longer does. */
  release(): Promise<boolean> {
    const op = this.#lockOps.then(async () => {
      if (!this.isLeader()) return true;
      const now = this.#clock.now();
      const released: LeaderElectionRecord = {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: this.#observed!.leaseTransitions,
      };
      try {
        await this.#o.lock.update(released);
      } catch (err) {
        this.#o.logger.warn(`lease ${this.#o.lock.describe()}: cannot release it`, err);
        return false;
      }
      this.#setObserved(released, now);
      this.#o.logger.info(`released lease ${this.#o.lock.describe()}`);
      return true;
    });
    this.#lockOps = op.catch(() => {});
    return op;
  }

  /** A write that lost a race (409) is part of the protocol; anything else is worth a line. */
  #writeFailed(what: string, err: unknown): void {
    const lost = (err as { code?: number })?.code === 409;
    const log = lost ? this.#o.logger.debug : this.#o.logger.warn;
    log(`lease ${this.#o.lock.describe()}: cannot ${what} it`, err);
  }

  #setObserved(record: LeaderElectionRecord, now: number): void {
    const before = this.#observed?.holderIdentity;
    this.#observed = record;
    this.#observedRaw = JSON.stringify(record);
    this.#observedTime = now;
    const holder = record.holderIdentity;
    if (holder !== before && holder !== "" && holder !== this.#o.identity) {
      this.#o.logger.info(`lease ${this.#o.lock.describe()}: the leader is ${holder}`);
    }
  }

  /** Whether the observed record is still within its lease duration, on this replica's clock. */
  #leaseValid(now: number): boolean {
    const seconds = this.#observed?.leaseDurationSeconds ?? 0;
    return this.#observedTime + seconds * 1000 > now;
  }

  #jittered(ms: number): number {
    return ms + (this.#o.random ?? Math.random)() * JITTER_FACTOR * ms;
  }

  /** `op`'s outcome, or false once `ms` have passed (the operation may still finish later). */
  async #bounded(op: Promise<boolean>, ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), ms));
    try {
      return await Promise.race([op, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `op`'s outcome, or false as soon as `signal` aborts. */
function untilAborted(op: Promise<boolean>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const aborted = () => resolve(false);
    signal.addEventListener("abort", aborted, { once: true });
    op.then(resolve, () => resolve(false)).finally(() =>
      signal.removeEventListener("abort", aborted)
    );
  });
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/** A holder identity as client-go's users make it: `<hostname>_<uuid>`. */
export function holderIdentity(): string {
  let host = "localhost";
  try {
    host = Deno.hostname();
  } catch { /* no --allow-sys: the uuid alone keeps it unique */ }
  return `${host}_${crypto.randomUUID()}`;
}
