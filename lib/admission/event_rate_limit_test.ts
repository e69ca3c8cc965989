import assert from "node:assert/strict";
import { type Clock, type KubeObject, StatusError } from "../api/mod.ts";
import type { AdmissionAttributes } from "./attributes.ts";
import {
  type EventRateLimit,
  eventRateLimit,
  limitKey,
  LruCache,
  TokenBucket,
} from "./event_rate_limit.ts";

/** A clock that moves only when told. */
function fakeClock(): Clock & { advance(ms: number): void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

function event(
  over: Partial<AdmissionAttributes> = {},
  object: KubeObject = {},
): AdmissionAttributes {
  return {
    operation: "CREATE",
    resource: { group: "", version: "v1", resource: "events" },
    subresource: "",
    kind: { group: "", version: "v1", kind: "Event" },
    namespace: "default",
    name: "e",
    object: { metadata: { name: "e" }, ...object },
    user: { username: "alice", groups: [] },
    dryRun: false,
    warnings: [],
    auditAnnotations: {},
    ...over,
  };
}

function limit(l: Partial<EventRateLimit>): EventRateLimit {
  return { type: "Server", qps: 1, burst: 1, cacheSize: 4096, ...l };
}

/** Runs the validating phase: the refusal's message, or "ok". */
async function run(plugin: ReturnType<typeof eventRateLimit>, a: AdmissionAttributes) {
  try {
    await plugin.validate!(a);
    return "ok";
  } catch (err) {
    assert(err instanceof StatusError);
    assert.equal(err.code, 429);
    assert.equal(err.reason, "TooManyRequests");
    return err.message;
  }
}

Deno.test("token bucket: starts full, refills at qps up to burst", () => {
  const clock = fakeClock();
  const b = new TokenBucket(2, 3, clock);
  assert.deepEqual([b.tryAccept(), b.tryAccept(), b.tryAccept(), b.tryAccept()], [
    true,
    true,
    true,
    false,
  ]);
  clock.advance(499); // 0.998 of a token
  assert.equal(b.tryAccept(), false);
  clock.advance(1); // one token
  assert.equal(b.tryAccept(), true);
  assert.equal(b.tryAccept(), false);
  clock.advance(60_000); // refills to the burst, not beyond
  assert.deepEqual([b.tryAccept(), b.tryAccept(), b.tryAccept(), b.tryAccept()], [
    true,
    true,
    true,
    false,
  ]);
  // A clock that goes back does not add tokens.
  clock.advance(-10_000);
  assert.equal(b.tryAccept(), false);
});

Deno.test("LRU: at most size entries; the least recently used goes first", () => {
  const c = new LruCache<number>(2);
  let made = 0;
  const make = () => ++made;
  assert.equal(c.get("a", make), 1);
  assert.equal(c.get("b", make), 2);
  assert.equal(c.get("a", make), 1); // a is now the most recent
  assert.equal(c.get("c", make), 3); // b goes
  assert.equal(c.has("b"), false);
  assert.equal(c.has("a"), true);
  assert.equal(c.length, 2);
  assert.equal(c.get("b", make), 4); // made again
  assert.equal(c.has("a"), false);
});

Deno.test("EventRateLimit: Server limit, kube's message, refill with the clock", async () => {
  const clock = fakeClock();
  const p = eventRateLimit({ limits: [limit({ type: "Server", qps: 1, burst: 2 })] }, clock);
  assert.equal(p.name, "EventRateLimit");
  assert.deepEqual(p.operations, ["CREATE", "UPDATE"]);
  assert.equal(await run(p, event()), "ok");
  assert.equal(await run(p, event({ namespace: "other" })), "ok");
  assert.equal(
    await run(p, event()),
    "Too many requests: limit reached on type Server for key ",
  );
  clock.advance(1000);
  assert.equal(await run(p, event({ operation: "UPDATE" })), "ok");
  assert.notEqual(await run(p, event()), "ok");
});

Deno.test("EventRateLimit: only core Events, not dry runs", async () => {
  const p = eventRateLimit({ limits: [limit({ burst: 1 })] }, fakeClock());
  const other = {
    kind: { group: "events.platform.io", version: "v1", kind: "Event" },
    resource: { group: "events.platform.io", version: "v1", resource: "events" },
  };
  for (let i = 0; i < 3; i++) {
    assert.equal(await run(p, event(other)), "ok");
    assert.equal(await run(p, event({ kind: { group: "", version: "v1", kind: "Pod" } })), "ok");
    assert.equal(await run(p, event({ dryRun: true })), "ok");
  }
  assert.equal(await run(p, event()), "ok");
  assert.notEqual(await run(p, event()), "ok");
});

Deno.test("EventRateLimit: Namespace, User and SourceAndObject buckets by kube's keys", async () => {
  const clock = fakeClock();
  const ns = eventRateLimit({ limits: [limit({ type: "Namespace", burst: 1 })] }, clock);
  assert.equal(await run(ns, event({ namespace: "a" })), "ok");
  assert.equal(await run(ns, event({ namespace: "b" })), "ok");
  assert.equal(
    await run(ns, event({ namespace: "a" })),
    "Too many requests: limit reached on type Namespace for key a",
  );

  const user = eventRateLimit({ limits: [limit({ type: "User", burst: 1 })] }, clock);
  assert.equal(await run(user, event()), "ok");
  assert.equal(await run(user, event({ user: { username: "bob", groups: [] } })), "ok");
  assert.equal(
    await run(user, event()),
    "Too many requests: limit reached on type User for key alice",
  );

  const source = {
    source: { component: "kubelet", host: "node-1" },
    involvedObject: {
      kind: "Pod",
      namespace: "default",
      name: "web",
      uid: "u-1",
      apiVersion: "v1",
    },
  };
  const a = event({}, source);
  assert.equal(limitKey("SourceAndObject", a), "kubeletnode-1Poddefaultwebu-1v1");
  assert.equal(limitKey("Server", a), "");
  assert.equal(limitKey("Namespace", a), "default");
  assert.equal(limitKey("User", a), "alice");
  const so = eventRateLimit({ limits: [limit({ type: "SourceAndObject", burst: 1 })] }, clock);
  assert.equal(await run(so, a), "ok");
  const otherPod = event({}, { ...source, involvedObject: { ...source.involvedObject, uid: "2" } });
  assert.equal(await run(so, otherPod), "ok");
  assert.equal(
    await run(so, a),
    "Too many requests: limit reached on type SourceAndObject for key " +
      "kubeletnode-1Poddefaultwebu-1v1",
  );
});

Deno.test("EventRateLimit: every limit takes a token; refusals are listed together", async () => {
  const clock = fakeClock();
  const p = eventRateLimit({
    limits: [limit({ type: "Namespace", burst: 1 }), limit({ type: "User", burst: 2 })],
  }, clock);
  assert.equal(await run(p, event()), "ok");
  // The namespace bucket refuses; the user's still gives its token.
  assert.equal(
    await run(p, event()),
    "Too many requests: limit reached on type Namespace for key default",
  );
  assert.equal(
    await run(p, event()),
    "Too many requests: [limit reached on type Namespace for key default, " +
      "limit reached on type User for key alice]",
  );
});

Deno.test("EventRateLimit: an evicted bucket comes back full", async () => {
  const clock = fakeClock();
  const p = eventRateLimit({
    limits: [limit({ type: "Namespace", burst: 1, cacheSize: 2 })],
  }, clock);
  assert.equal(await run(p, event({ namespace: "a" })), "ok");
  assert.notEqual(await run(p, event({ namespace: "a" })), "ok");
  assert.equal(await run(p, event({ namespace: "b" })), "ok");
  assert.equal(await run(p, event({ namespace: "c" })), "ok"); // a's bucket goes
  assert.equal(await run(p, event({ namespace: "a" })), "ok");
  assert.notEqual(await run(p, event({ namespace: "a" })), "ok");
});
