import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { scopeContext, usesRuntimeContext } from "./scope_context.ts";

const tick = () => new Promise<void>((r) => setTimeout(r, 1));

Deno.test("the pinned Deno has the runtime's context accessors (no AsyncLocalStorage per run)", () => {
  // A Deno without them still works (the fallback below), but pays a WeakMap entry per traced
  // request again: this says so at the upgrade.
  assert.deepEqual(usesRuntimeContext(), true);
});

for (const fallback of [false, true]) {
  const label = fallback ? "AsyncLocalStorage" : "runtime context";

  Deno.test(`${label}: a value follows its work across awaits and timers, and only its work`, async () => {
    const ctx = scopeContext<{ n: number }>(fallback);
    assert.deepEqual(ctx.get(), undefined);
    const seen: [number, number | undefined][] = [];
    const work = async (n: number) => {
      await tick();
      seen.push([n, ctx.get()?.n]);
      await Promise.resolve();
      await new Promise<void>((r) => queueMicrotask(r));
      seen.push([n, ctx.get()?.n]);
    };
    await Promise.all([1, 2, 3].map((n) => ctx.run({ n }, () => work(n))));
    assert.deepEqual(seen.filter(([n, got]) => n !== got), []);
    assert.deepEqual(seen.length, 6);
    assert.deepEqual(ctx.get(), undefined);
  });

  Deno.test(`${label}: nested runs see the inner value, then the outer again; a throw restores`, async () => {
    const ctx = scopeContext<{ n: number }>(fallback);
    await ctx.run({ n: 1 }, async () => {
      await ctx.run({ n: 2 }, async () => {
        await tick();
        assert.deepEqual(ctx.get()?.n, 2);
      });
      assert.deepEqual(ctx.get()?.n, 1);
      try {
        ctx.run({ n: 3 }, () => {
          throw new Error("x");
        });
      } catch { /* expected */ }
      assert.deepEqual(ctx.get()?.n, 1);
      await tick();
      assert.deepEqual(ctx.get()?.n, 1);
    });
    assert.deepEqual(ctx.get(), undefined);
  });

  Deno.test(`${label}: AsyncLocalStorage values around and inside a run are kept`, async () => {
    const ctx = scopeContext<{ n: number }>(fallback);
    const als = new AsyncLocalStorage<string>();
    await als.run("outer", () =>
      ctx.run({ n: 1 }, async () => {
        await tick();
        assert.deepEqual(als.getStore(), "outer");
        await als.run("inner", async () => {
          await tick();
          assert.deepEqual(als.getStore(), "inner");
          assert.deepEqual(ctx.get()?.n, 1);
        });
        assert.deepEqual(als.getStore(), "outer");
        assert.deepEqual(ctx.get()?.n, 1);
      }));
    assert.deepEqual(als.getStore(), undefined);
  });
}

Deno.test("two stores of the runtime context do not see each other's values", async () => {
  const a = scopeContext<{ n: number }>();
  const b = scopeContext<{ n: number }>();
  await a.run({ n: 1 }, async () => {
    await tick();
    assert.deepEqual(b.get(), undefined);
    await b.run({ n: 2 }, async () => {
      await tick();
      assert.deepEqual([a.get()?.n, b.get()?.n], [1, 2]);
    });
  });
});
