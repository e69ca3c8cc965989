/**
 * Where a line of work keeps its tracing scope across awaits: the async context V8 carries
 * from a promise to its reactions (the "continuation-preserved embedder data", the context
 * under Deno's `AsyncLocalStorage`).
 *
 * Deno's `AsyncLocalStorage.run` copies the context into a new mapping and keys the value
 * by a fresh object in a WeakMap. The WeakMap's table is only cleaned by a full collection,
 * and each young-generation collection walks it again: with one run per traced request, a
 * scavenge took 2.1 ms against 0.4 untraced (`--trace-gc`, 2026-11-28), and the run itself
 * 1.3 µs. Here the scope is a property of the context mapping, under a symbol of our own
 * next to `AsyncLocalStorage`'s entries (which are kept as they are): no WeakMap. That needs
 * the runtime's context accessors (`Deno[Deno.internal].core`); a runtime without them gets
 * `AsyncLocalStorage`, as before.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** A store of one value per line of work. */
export interface ScopeContext<S extends object> {
  /** The value of the current line of work, if any. */
  get(): S | undefined;
  /** Runs `fn` with `value` as the current value (and whatever `fn` starts, across awaits). */
  run<T>(value: S, fn: () => T): T;
}

type ContextMapping = Record<PropertyKey, unknown> | undefined;
interface RuntimeContext {
  getAsyncContext(): ContextMapping;
  setAsyncContext(mapping: ContextMapping): void;
}

/** The runtime's async context accessors, when this Deno has them. */
function runtimeContext(): RuntimeContext | undefined {
  const deno = globalThis.Deno as unknown as Record<symbol, { core?: Partial<RuntimeContext> }>;
  const internal = (globalThis.Deno as unknown as { internal?: symbol }).internal;
  const core = internal === undefined ? undefined : deno[internal]?.core;
  if (
    typeof core?.getAsyncContext !== "function" || typeof core.setAsyncContext !== "function"
  ) return undefined;
  return core as RuntimeContext;
}

class MappingContext<S extends object> implements ScopeContext<S> {
  readonly #key = Symbol("tracing scope");
  constructor(readonly runtime: RuntimeContext) {}

  get(): S | undefined {
    return this.runtime.getAsyncContext()?.[this.#key] as S | undefined;
  }

  run<T>(value: S, fn: () => T): T {
    const { getAsyncContext, setAsyncContext } = this.runtime;
    const key = this.#key;
    const before = getAsyncContext();
    // A new mapping each time: promises made under `before` keep seeing it unchanged. A
    // plain object (`AsyncLocalStorage` reads numeric keys of its own, which no prototype
    // has), made cheapest where nothing else is in the context.
    setAsyncContext(before === undefined ? { [key]: value } : { ...before, [key]: value });
    try {
      return fn();
    } finally {
      setAsyncContext(before);
    }
  }
}

class StorageContext<S extends object> implements ScopeContext<S> {
  readonly #storage = new AsyncLocalStorage<S>();
  get(): S | undefined {
    return this.#storage.getStore();
  }
  run<T>(value: S, fn: () => T): T {
    return this.#storage.run(value, fn);
  }
}

/** A new store; `fallback` forces `AsyncLocalStorage` (for tests of both). */
export function scopeContext<S extends object>(fallback = false): ScopeContext<S> {
  const runtime = fallback ? undefined : runtimeContext();
  return runtime ? new MappingContext<S>(runtime) : new StorageContext<S>();
}

/** Whether {@link scopeContext} uses the runtime's accessors here (not `AsyncLocalStorage`). */
export function usesRuntimeContext(): boolean {
  return runtimeContext() !== undefined;
}
