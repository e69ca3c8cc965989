/**
 * The current span across awaits: a request's span opens a scope, a child run with
 * `withSpan` is current in it until its work settles (across awaits) and its parent again
 * after, and `traced` work that runs beside its siblings keeps its own span current.
 */

import assert from "node:assert/strict";
import {
  childSpan,
  countOpenTracer,
  currentSpan,
  currentTraceparent,
  NOOP_SPAN,
  type Span,
  traced,
  withSpan,
} from "./span.ts";

/** A recording span that names its children after itself. */
function fakeSpan(name: string): Span {
  let ended = false;
  return {
    recording: true,
    setAttribute() {},
    fail() {},
    end() {
      ended = true;
    },
    child: (child) => fakeSpan(`${name}/${child}`),
    traceparent: () => ended ? undefined : name,
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("current span: a request's children take turns as current, across awaits", async () => {
  countOpenTracer(1);
  try {
    assert.equal(currentSpan(), NOOP_SPAN);
    const request = fakeSpan("request");
    await withSpan(request, async () => {
      assert.equal(currentTraceparent(), "request");
      const store = childSpan("Get file");
      const got = await withSpan(store, async () => {
        await tick();
        // Still the store span after an await: an etcd call made here carries it.
        return currentTraceparent();
      });
      store.end();
      assert.equal(got, "request/Get file");
      assert.equal(currentTraceparent(), "request");
      // A synchronous child, and one that throws: the parent is current again after both.
      assert.equal(
        withSpan(childSpan("Authorize"), () => currentTraceparent()),
        "request/Authorize",
      );
      await assert.rejects(
        withSpan(childSpan("Create file"), () => Promise.reject(new Error("x"))),
      );
      assert.equal(currentTraceparent(), "request");
      // Work that runs side by side keeps its own span current.
      const calls = await Promise.all(
        ["a", "b"].map((hook) =>
          traced(`Call webhook ${hook}`, undefined, async () => {
            await tick();
            const before = currentTraceparent();
            await tick();
            return [before, currentTraceparent()];
          })
        ),
      );
      assert.deepEqual(calls, [
        ["request/Call webhook a", "request/Call webhook a"],
        ["request/Call webhook b", "request/Call webhook b"],
      ]);
      assert.equal(currentTraceparent(), "request");
    });
    assert.equal(currentSpan(), NOOP_SPAN);
  } finally {
    countOpenTracer(-1);
  }
});
