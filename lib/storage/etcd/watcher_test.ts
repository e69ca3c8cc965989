import { assert, assertEquals, assertMatch } from "../../../tests/assert.ts";
import { EtcdWatcher } from "./watcher.ts";
import { Mirror } from "./mirror.ts";
import type { EtcdClient } from "./client.ts";

const quiet = { info() {}, warn() {}, error() {} };

/** The error `p` fails with (the test fails if it resolves). */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return String(err);
  }
  throw new Error("resolved, expected a failure");
}

/** A watcher whose etcd never answers: its stream takes the create request and stays silent. */
function silentWatcher(mirror: Mirror): EtcdWatcher {
  const stream = { on() {}, write() {}, cancel() {} };
  const client = { watchStream: () => stream } as unknown as EtcdClient;
  const watcher = new EtcdWatcher(client, mirror, {
    prefix: "/registry",
    logger: quiet,
    decode: () => {
      throw new Error("no events");
    },
  });
  watcher.start();
  return watcher;
}

Deno.test("a write whose revision does not reach the copy in time fails; others still resolve", async () => {
  const mirror = new Mirror([], 10, { logger: quiet });
  const watcher = silentWatcher(mirror);
  try {
    const started = performance.now();
    const late = watcher.catchUp(12, 60);
    const longer = watcher.catchUp(11, 5_000);
    const lateErr = await failure(late);
    const waited = performance.now() - started;
    assertMatch(lateErr, /did not catch up with revision 12 within 60 ms \(at 10\)/);
    assert(waited >= 55 && waited < 2_000, `failed after ${waited} ms`);
    // The one with more time is still waiting, and resolves when its revision arrives.
    mirror.apply([{
      type: "put",
      revision: 11,
      kv: { key: "/a", value: "{}", createRevision: 11, modRevision: 11 },
    }]);
    await longer;
    assertEquals(mirror.revision, 11);
    // A later write on a quiet watcher times out too (the deadline timer was armed again).
    assertMatch(await failure(watcher.catchUp(13, 30)), /revision 13 within 30 ms/);
  } finally {
    watcher.stop();
    mirror.failWaiters(new Error("closed"));
  }
});
