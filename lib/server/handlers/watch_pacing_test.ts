import { assert, assertEquals } from "../../../tests/assert.ts";
import { WatchPacer } from "./watch_pacing.ts";

Deno.test("the batching window grows with the open streams, from none to at most 50 ms", () => {
  const pacer = new WatchPacer();
  const open = (n: number) => {
    while (pacer.open < n) pacer.opened();
    while (pacer.open > n) pacer.closed();
  };
  open(1);
  assertEquals(pacer.window(), 0);
  assertEquals(pacer.holdFor(100, 100), 0, "a lone watcher is never held");
  open(24);
  assertEquals(pacer.window(), 0);
  open(100);
  assertEquals(pacer.window(), 4);
  open(1000);
  assertEquals(pacer.window(), 40);
  assertEquals(pacer.holdFor(100, 110), 30, "held until a window after its last write");
  assertEquals(pacer.holdFor(100, 140), 0, "a window after its last write it sends at once");
  open(100_000);
  assertEquals(pacer.window(), 50);
  open(0);
  assertEquals(pacer.window(), 0);
});

Deno.test("held streams share one timer per slot", async () => {
  const pacer = new WatchPacer();
  const start = performance.now();
  const waits = Array.from({ length: 100 }, () => pacer.wait(10));
  // One timer per 2 ms slot the loop spanned (a loaded machine may stretch it), not per wait.
  const slots = Math.ceil((performance.now() - start) / 2) + 1;
  assert(new Set(waits).size <= slots, `${new Set(waits).size} timers for 100 waits`);
  await Promise.all(waits);
  assert(performance.now() - start >= 9.5, "resolved before the time asked for");
});

Deno.test("the window widens while slot timers fire late, and narrows again once they stop", async () => {
  const pacer = new WatchPacer();
  for (let i = 0; i < 250; i++) pacer.opened();
  assertEquals(pacer.window(), 10, "250 streams: 10 ms on a server that keeps up");
  // Held streams whose timer fires 40 ms late: the event loop was busy meanwhile.
  for (let round = 0; round < 5; round++) {
    const woken = pacer.wait(1);
    const until = performance.now() + 40;
    while (performance.now() < until) { /* busy: the timer cannot fire */ }
    await woken;
  }
  const widened = pacer.window();
  assert(widened >= 40, `window ${widened} ms after timers fired 40 ms late`);
  assert(widened <= 50, `window ${widened} ms: over the 50 ms cap`);
  assertEquals(pacer.holdFor(0, 10), widened - 10, "held for the widened window");
  assertEquals(pacer.window(performance.now() + 1500), 10, "lateness a while ago no longer counts");
});
