/** The leader's controller set: order of starts and stops, late additions, a failed start. */

import nodeAssert from "node:assert/strict";
import { assertEquals } from "../../tests/assert.ts";
import { silentLogger } from "../api/mod.ts";
import { ControllerSet, type ControllerStarter } from "./controller_set.ts";

function recorder() {
  const log: string[] = [];
  const starter = (name: string, fail = false): ControllerStarter => ({
    name,
    start() {
      if (fail) return Promise.reject(new Error(`${name} cannot start`));
      log.push(`start ${name}`);
      return Promise.resolve({ stop: () => void log.push(`stop ${name}`) });
    },
  });
  return { log, starter };
}

Deno.test("controllers start in order, stop in reverse, and start anew each term", async () => {
  const { log, starter } = recorder();
  const set = new ControllerSet(silentLogger);
  await set.add(starter("a"));
  await set.add(starter("b"));
  assertEquals(log, []); // added, not running
  await set.start();
  await set.add(starter("c")); // while running: starts now
  await set.stop();
  await set.stop(); // idempotent
  await set.start();
  assertEquals(log, [
    "start a",
    "start b",
    "start c",
    "stop c",
    "stop b",
    "stop a",
    "start a",
    "start b",
    "start c",
  ]);
  assertEquals(set.active, true);
});

Deno.test("a stop asked while starting waits for the start, then stops what started", async () => {
  const { log, starter } = recorder();
  const set = new ControllerSet(silentLogger);
  await set.add(starter("a"));
  const starting = set.start();
  const stopping = set.stop();
  await Promise.all([starting, stopping]);
  assertEquals(log, ["start a", "stop a"]);
  assertEquals(set.active, false);
});

Deno.test("a controller that fails to start stops those started before it", async () => {
  const { log, starter } = recorder();
  const set = new ControllerSet(silentLogger);
  await set.add(starter("a"));
  await set.add(starter("b", true));
  await nodeAssert.rejects(() => set.start(), /b cannot start/);
  assertEquals(log, ["start a", "stop a"]);
  assertEquals(set.active, false);
});
