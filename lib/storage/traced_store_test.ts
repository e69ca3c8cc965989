/**
 * The traced store: each operation of a traced request is a child span with its key, ended when
 * the operation settles and failed when it fails; a backend that reads at once is not made the
 * current span's holder, one that answers later (etcd) is, so that its calls carry the span.
 */

import assert from "node:assert/strict";
import { currentTraceparent, type Span, withSpan } from "../tracing/mod.ts";
import { countOpenTracer } from "../tracing/span.ts";
import { MemoryStore, type Store } from "./mod.ts";
import { tracedStore } from "./traced_store.ts";

interface Recorded {
  name: string;
  attributes: Record<string, unknown>;
  failed?: string;
  ended: boolean;
}

/** A recording span that keeps its children in `spans`. */
function recordingSpan(name: string, spans: Recorded[], attributes = {}): Span {
  const me: Recorded = { name, attributes, ended: false };
  spans.push(me);
  return {
    recording: true,
    setAttribute: (k, v) => void (me.attributes[k] = v),
    fail: (message) => void (me.failed = message),
    end: () => void (me.ended = true),
    child: (child, attrs) => recordingSpan(child, spans, attrs),
    traceparent: () => me.ended ? undefined : name,
  };
}

Deno.test("a traced store: reads and writes are ended child spans, failures marked; a later backend's calls carry the span", async () => {
  countOpenTracer(1);
  const memory = new MemoryStore();
  try {
    const spans: Recorded[] = [];
    const store = tracedStore(memory, "memory");
    assert.equal(store.readsAtOnce, true);
    const key = "/registry/core/configmaps/default/a";
    await withSpan(recordingSpan("request", spans), async () => {
      await store.create(key, "{}");
      assert.equal((await store.get(key))?.value, "{}");
      await assert.rejects(store.get(key, { revision: 1e9 }));
      await store.list("/registry/core/configmaps/", { limit: 5 });
    });
    assert.deepEqual(spans.map((s) => [s.name, s.ended, s.failed !== undefined]), [
      ["request", false, false],
      ["Create memory", true, false],
      ["Get memory", true, false],
      ["Get memory", true, true],
      ["List memory", true, false],
    ]);
    assert.equal(spans[2].attributes.key, key);
    assert.equal(spans[4].attributes.limit, 5);

    // A backend that answers later: its work runs with the read's span current.
    const seen: (string | undefined)[] = [];
    const later: Store = Object.assign(Object.create(memory), {
      readsAtOnce: undefined,
      get: async (k: string) => {
        await new Promise((r) => setTimeout(r, 1));
        seen.push(currentTraceparent());
        return memory.get(k);
      },
    });
    const remote = tracedStore(later, "etcd3");
    await withSpan(recordingSpan("request", spans), () => remote.get(key));
    assert.deepEqual(seen, ["Get etcd3"]);
    assert.equal(spans.at(-1)!.ended, true);
  } finally {
    countOpenTracer(-1);
    await memory.close();
  }
});
