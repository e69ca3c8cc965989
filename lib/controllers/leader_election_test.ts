/**
 * The leader elector's state machine (client-go's tryAcquireOrRenew and release) on a fake
 * clock, over a real Lease registry on the memory store; then its campaign loop with real
 * (short) timers: a stop hands over, a failed start gives the lease up.
 */

import { assert, assertEquals } from "../../tests/assert.ts";
import { silentLogger } from "../api/mod.ts";
import { ResourceRegistry } from "../registry/mod.ts";
import { leases } from "../resources/mod.ts";
import { SchemaSet } from "../schema/mod.ts";
import { MemoryStore } from "../storage/memory.ts";
import { LeaderElector, type LeaderElectorOptions } from "./leader_election.ts";
import { LeaseLock } from "./lease_lock.ts";

const NS = "platform-system";
const NAME = "platform-controllers";

/** A Lease registry on a memory store, and a clock the test moves. */
function world() {
  const registry = new ResourceRegistry(leases, {
    store: new MemoryStore(),
    schemas: SchemaSet.builtin(),
  });
  const clock = { t: 1_000_000, now: () => clock.t };
  const elector = (identity: string, o: Partial<LeaderElectorOptions> = {}) =>
    new LeaderElector({
      lock: new LeaseLock(registry, NS, NAME),
      identity,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      onStartedLeading: () => Promise.resolve(),
      onStoppedLeading: () => Promise.resolve(),
      logger: silentLogger,
      clock,
      ...o,
    });
  const lease = () => registry.get(NS, NAME).then((l) => l.spec);
  return { registry, clock, elector, lease };
}

Deno.test("the first candidate creates the Lease; others wait out its duration", async () => {
  const { clock, elector, lease } = world();
  const a = elector("host-a_1");
  const b = elector("host-b_2");
  assert(await a.tryAcquireOrRenew());
  assert(a.isLeader());
  const created = await lease();
  assertEquals(created.holderIdentity, "host-a_1");
  assertEquals(created.leaseDurationSeconds, 15);
  assertEquals(created.leaseTransitions, 0);
  assertEquals(created.acquireTime, created.renewTime);
  assert(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(created.renewTime), created.renewTime);

  // B first sees the record now: it may take over 15 s later, on its own clock.
  assertEquals(await b.tryAcquireOrRenew(), false);
  clock.t += 14_999;
  assertEquals(await b.tryAcquireOrRenew(), false);
  assertEquals(b.isLeader(), false);
  clock.t += 1;
  assert(await b.tryAcquireOrRenew());
  const taken = await lease();
  assertEquals(taken.holderIdentity, "host-b_2");
  assertEquals(taken.leaseTransitions, 1);
  assert(taken.acquireTime !== created.acquireTime);

  // A's renewal fails: the Lease changed under it, and it sees B hold it.
  assertEquals(await a.tryAcquireOrRenew(), false);
  assertEquals(a.isLeader(), false);
});

Deno.test("renewals keep acquireTime and transitions; expiry counts from when a change is seen", async () => {
  const { clock, elector, lease } = world();
  const a = elector("a");
  const b = elector("b");
  assert(await a.tryAcquireOrRenew());
  const acquired = await lease();
  assertEquals(await b.tryAcquireOrRenew(), false); // observed at t0
  clock.t += 10_000;
  assert(await a.tryAcquireOrRenew()); // renewed at t0+10s
  const renewed = await lease();
  assertEquals(renewed.acquireTime, acquired.acquireTime);
  assertEquals(renewed.leaseTransitions, 0);
  assert(renewed.renewTime > acquired.renewTime);
  // B sees the renewal only at t0+14s: the lease is valid for it until t0+29s.
  clock.t += 4_000;
  assertEquals(await b.tryAcquireOrRenew(), false);
  clock.t += 14_999;
  assertEquals(await b.tryAcquireOrRenew(), false);
  clock.t += 1;
  assert(await b.tryAcquireOrRenew());
  assertEquals((await lease()).leaseTransitions, 1);
});

Deno.test("a released Lease is taken at once, with one more transition", async () => {
  const { elector, lease } = world();
  const a = elector("a");
  const b = elector("b");
  assert(await a.tryAcquireOrRenew());
  assertEquals(await b.tryAcquireOrRenew(), false);
  assert(await a.release());
  const released = await lease();
  assertEquals(released.holderIdentity, "");
  assertEquals(released.leaseDurationSeconds, 1);
  assertEquals(a.isLeader(), false);
  assert(await b.tryAcquireOrRenew());
  const taken = await lease();
  assertEquals(taken.holderIdentity, "b");
  assertEquals(taken.leaseTransitions, 1);
  // Releasing what one does not hold changes nothing.
  assert(await a.release());
  assertEquals((await lease()).holderIdentity, "b");
});

Deno.test("of candidates racing for a free or expired Lease exactly one wins", async () => {
  const { clock, elector, lease } = world();
  const candidates = ["a", "b", "c", "d"].map((id) => elector(id));
  const won = await Promise.all(candidates.map((c) => c.tryAcquireOrRenew()));
  assertEquals(won.filter(Boolean).length, 1);
  const holder = (await lease()).holderIdentity;
  assertEquals(candidates.filter((c) => c.isLeader()).map((c) => c.identity), [holder]);
  // Everyone observed the record; once it expires, again exactly one takes it.
  await Promise.all(candidates.map((c) => c.tryAcquireOrRenew()));
  clock.t += 15_000;
  const others = candidates.filter((c) => c.identity !== holder);
  const retaken = await Promise.all(others.map((c) => c.tryAcquireOrRenew()));
  assertEquals(retaken.filter(Boolean).length, 1);
  assertEquals((await lease()).leaseTransitions, 1);
});

/** Waits until `done()` holds, polling; fails after `ms`. */
async function eventually(done: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Campaigning replicas with short durations, logging what each leader started. */
function campaigners() {
  const { registry, lease } = world();
  const log: string[] = [];
  const replica = (id: string, o: Partial<LeaderElectorOptions> = {}) =>
    new LeaderElector({
      lock: new LeaseLock(registry, NS, NAME),
      identity: id,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 100,
      onStartedLeading: () => Promise.resolve(void log.push(`${id} started`)),
      onStoppedLeading: () => Promise.resolve(void log.push(`${id} stopped`)),
      logger: silentLogger,
      ...o,
    });
  return { replica, log, lease };
}

Deno.test("campaign: one leads; a graceful stop releases the Lease and the other takes over", async () => {
  const { replica, log, lease } = campaigners();
  const a = replica("a");
  const b = replica("b");
  await a.start(); // an empty Lease: the first try wins, and start() waits for the controllers
  assertEquals(log, ["a started"]);
  assert(a.leading);
  await b.start();
  assertEquals(b.leading, false);
  await a.stop();
  assertEquals(log, ["a started", "a stopped"]);
  // Released: b's next try (a retry period, not a lease duration, away) wins.
  await eventually(() => b.leading, "b leads");
  assertEquals(log, ["a started", "a stopped", "b started"]);
  const held = await lease();
  assertEquals(held.holderIdentity, "b");
  assertEquals(held.leaseTransitions, 1);
  await b.stop();
  assertEquals(log, ["a started", "a stopped", "b started", "b stopped"]);
  assertEquals((await lease()).holderIdentity, "");
});

Deno.test("campaign: a leader whose controllers fail to start gives the Lease up", async () => {
  const { replica, log, lease } = campaigners();
  let tries = 0;
  const broken = replica("broken", {
    onStartedLeading: () => Promise.reject(new Error(`cannot start (${++tries})`)),
  });
  await broken.start(); // wins the empty Lease, fails to start, releases it
  await eventually(() => !broken.leading, "broken steps down");
  assert(tries >= 1);
  assertEquals(log[0], "broken stopped"); // stopped after the failed start, whatever it began
  const good = replica("good");
  await good.start();
  await eventually(() => good.leading, "good leads");
  assertEquals((await lease()).holderIdentity, "good");
  await broken.stop();
  await good.stop();
});

Deno.test("campaign: a leader that sees another holder stops its controllers and campaigns again", async () => {
  const { registry, lease } = world();
  const log: string[] = [];
  const a = new LeaderElector({
    lock: new LeaseLock(registry, NS, NAME),
    identity: "a",
    leaseDurationMs: 1_000,
    renewDeadlineMs: 600,
    retryPeriodMs: 100,
    onStartedLeading: () => Promise.resolve(void log.push("started")),
    onStoppedLeading: () => Promise.resolve(void log.push("stopped")),
    logger: silentLogger,
  });
  await a.start();
  assertEquals(log, ["started"]);
  // Someone else writes the Lease (another replica that thought it expired, an operator).
  const current = await registry.get(NS, NAME);
  const spec = { ...current.spec, holderIdentity: "intruder", leaseTransitions: 7 };
  await registry.update(NS, NAME, { ...current, spec }, { user: { username: "op", groups: [] } });
  await eventually(() => log.length === 2, "a stops its controllers");
  assertEquals(log, ["started", "stopped"]);
  // The intruder never renews: a second later a takes the Lease back, one transition more.
  await eventually(() => a.leading, "a leads again");
  assertEquals(log, ["started", "stopped", "started"]);
  const held = await lease();
  assertEquals([held.holderIdentity, held.leaseTransitions], ["a", 8]);
  await a.stop();
});
