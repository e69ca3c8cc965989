/**
 * An informer: a registry's objects mirrored in memory, kept in step by listing once and then
 * watching from the list's revision (kube's list-then-watch). Each change is handed to
 * `onEvent` as it is applied. A watch that fails is replaced by a fresh list, whose
 * differences from the mirror arrive as events.
 *
 * The store publishes a write's event before the write returns, and the informer applies it
 * through promise continuations only, within the same turn of the event loop: whatever
 * arrives later (the next HTTP request) finds the mirror up to date with every write that
 * completed before (an authorizer honours a binding created by the previous request).
 */

import type { Logger } from "../api/mod.ts";
import type { KubeObject } from "./definition.ts";
import type { RegistryWatch, ResourceRegistry, WatchEvent } from "./generic.ts";
import type { ObjectFilter } from "./filter.ts";

export interface InformerOptions {
  /** Called for every change, after the mirror has it. Must not throw. */
  onEvent: (ev: WatchEvent) => void;
  logger: Logger;
  /** Mirror only the objects this selects (e.g. one name in every namespace). */
  filter?: ObjectFilter;
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const meta = obj.metadata ?? {};
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

export class Informer {
  readonly #registry: ResourceRegistry;
  readonly #opts: InformerOptions;
  readonly #objects = new Map<string, KubeObject>();
  readonly #abort = new AbortController();
  #watch?: RegistryWatch;
  #running?: Promise<void>;

  constructor(registry: ResourceRegistry, opts: InformerOptions) {
    this.#registry = registry;
    this.#opts = opts;
  }

  /** Lists (an ADDED event per object) and starts watching; resolves once the list is in. */
  async start(): Promise<void> {
    const revision = await this.#relist();
    this.#watch = this.#open(revision);
    this.#running = this.#follow();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#watch?.return();
    await this.#running;
  }

  /** The mirrored objects (shared: read them, never change them). */
  objects(): IterableIterator<KubeObject> {
    return this.#objects.values();
  }

  /** The mirrored object under `key` (see {@link objectKey}), if any (shared: never change it). */
  get(key: string): KubeObject | undefined {
    return this.#objects.get(key);
  }

  #open(afterRevision: number): RegistryWatch {
    return this.#registry.watch("", {
      afterRevision,
      filter: this.#opts.filter,
      signal: this.#abort.signal,
    });
  }

  async #follow(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        for (;;) {
          const watch = this.#watch!;
          const r = await watch.next();
          if (r.done) break;
          // Whatever else is buffered is applied in the same step.
          for (let ev: WatchEvent | undefined = r.value; ev; ev = watch.poll()) this.#apply(ev);
        }
        if (signal.aborted) return;
        throw new Error("the watch ended");
      } catch (err) {
        if (signal.aborted) return;
        this.#opts.logger.warn(
          `${this.#registry.gr.resource} informer: watch failed, listing again`,
          err,
        );
        try {
          this.#watch = this.#open(await this.#relist());
        } catch (listErr) {
          this.#opts.logger.error(`${this.#registry.gr.resource} informer: list failed`, listErr);
          await pause(1000, signal);
        }
      }
    }
  }

  /** Lists everything, turning the differences from the mirror into events; the revision. */
  async #relist(): Promise<number> {
    const list = await this.#registry.list("", { filter: this.#opts.filter });
    const seen = new Set<string>();
    for (const obj of list.items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.#objects.get(key);
      if (old?.metadata?.resourceVersion === obj.metadata.resourceVersion) continue;
      this.#apply({ type: old ? "MODIFIED" : "ADDED", object: obj });
    }
    for (const [key, obj] of [...this.#objects]) {
      if (!seen.has(key)) this.#apply({ type: "DELETED", object: obj });
    }
    return Number(list.resourceVersion);
  }

  #apply(ev: WatchEvent): void {
    const key = objectKey(ev.object);
    if (ev.type === "DELETED") this.#objects.delete(key);
    else this.#objects.set(key, ev.object);
    this.#opts.onEvent(ev);
  }
}

/** Waits `ms`, or less if `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
