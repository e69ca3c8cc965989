/**
 * Namespace lifecycle: what its admission plugin (lib/admission/namespace_lifecycle.ts) reads
 * of the stored namespaces, and the controller that empties a terminating namespace, then
 * removes its `kubernetes` finalizer so the namespace itself goes away.
 */

import type { KubeObject, Logger } from "../api/mod.ts";
import type { NamespaceLookup, NamespacePhase } from "../admission/mod.ts";
import type { KeyValue, Store } from "../storage/mod.ts";
import { resourcePrefix, type ResourceRegistry } from "../registry/mod.ts";
import { NAMESPACE_FINALIZER, NAMESPACE_NAME_LABEL } from "../resources/mod.ts";

/** The namespaces that exist after the first start. */
export const SYSTEM_NAMESPACES = [
  "default",
  "platform-system",
  "platform-public",
  "platform-node-lease",
];

const NAMESPACES_PREFIX = resourcePrefix("", "namespaces");

/** The stored namespace objects (admission's namespace selectors read their labels). */
export function namespaceObjects(store: Store): (name: string) => Promise<KubeObject | undefined> {
  const decoded = new WeakMap<KeyValue, KubeObject>();
  return async (name: string) => {
    const kv = await readNamespace(store, name);
    if (!kv) return undefined;
    let ns = decoded.get(kv);
    if (!ns) {
      ns = JSON.parse(kv.value) as KubeObject;
      ns.metadata ??= {};
      ns.metadata.resourceVersion = String(kv.modRevision);
      deepFreeze(ns);
      decoded.set(kv, ns);
    }
    // Shared and frozen: admission only reads it (selectors, CEL's namespaceObject).
    return ns;
  };
}

function deepFreeze(o: unknown): void {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
}

/** The namespaces as NamespaceLifecycle admission sees them, read from the store. */
export function namespaceLookup(store: Store): NamespaceLookup {
  // Stored values are immutable and replaced on every write: decode each one once.
  const phases = new WeakMap<KeyValue, NamespacePhase>();
  const phaseOf = (kv: KeyValue) => {
    let phase = phases.get(kv);
    if (phase === undefined) {
      const ns = JSON.parse(kv.value);
      const terminating = Boolean(ns.metadata?.deletionTimestamp) ||
        ns.status?.phase === "Terminating";
      phase = terminating ? "Terminating" : "Active";
      phases.set(kv, phase);
    }
    return phase;
  };
  return async (name: string) => {
    const cached = await store.get(NAMESPACES_PREFIX + name, { cached: true });
    if (cached && phaseOf(cached) === "Active") return "Active";
    // Missing or terminating here: ask the store for the newest (kube's live lookup).
    const kv = await store.get(NAMESPACES_PREFIX + name);
    return kv ? phaseOf(kv) : undefined;
  };
}

/**
 * A namespace as this server holds it (kube's admission reads its informer's cache), or, when
 * it holds none, as the store has it now: a namespace just made on another replica is found.
 */
async function readNamespace(store: Store, name: string): Promise<KeyValue | undefined> {
  return await store.get(NAMESPACES_PREFIX + name, { cached: true }) ??
    await store.get(NAMESPACES_PREFIX + name);
}

/**
 * Gives every stored namespace the `kubernetes.io/metadata.name` label. Namespaces written
 * before the strategy set it lack it; kube adds it when decoding, we rewrite them once at
 * start-up (an update through the strategy, which sets the label). Returns their names.
 */
export async function labelStoredNamespaces(namespaces: ResourceRegistry): Promise<string[]> {
  const labelled: string[] = [];
  for (const ns of (await namespaces.list("")).items) {
    const name = ns.metadata.name;
    if (ns.metadata.labels?.[NAMESPACE_NAME_LABEL] === name) continue;
    try {
      await namespaces.update("", name, ns, SYSTEM_CONTEXT, { manager: "platform-apiserver" });
      labelled.push(name);
    } catch (err) {
      // Deleted meanwhile; anything else is a start-up failure.
      if ((err as { code?: number })?.code !== 404) throw err;
    }
  }
  return labelled;
}

export interface NamespaceControllerOptions {
  store: Store;
  namespaces: ResourceRegistry;
  /** Registries whose objects live in namespaces (each stored resource once). */
  contents: () => ResourceRegistry[];
  logger: Logger;
  /** How often a namespace still waiting on finalizers of its contents is retried. */
  retryMs?: number;
}

/**
 * Watches namespaces; for each one with a deletionTimestamp, deletes everything in it, and
 * once nothing is left removes the `kubernetes` finalizer (the registry then deletes the
 * namespace when no other finalizer holds it).
 */
export class NamespaceController {
  #opts: NamespaceControllerOptions;
  #abort = new AbortController();
  #pending = new Set<string>();
  #timer?: ReturnType<typeof setTimeout>;
  #running?: Promise<void>;
  #busy = false;

  constructor(opts: NamespaceControllerOptions) {
    this.#opts = opts;
  }

  /** Starts watching; returns once the initial scan is queued. */
  async start(): Promise<void> {
    const list = await this.#opts.namespaces.list("");
    for (const ns of list.items) {
      if (ns.metadata.deletionTimestamp) this.#pending.add(ns.metadata.name);
    }
    const watch = this.#opts.store.watch(NAMESPACES_PREFIX, {
      afterRevision: Number(list.resourceVersion),
      signal: this.#abort.signal,
    });
    this.#running = (async () => {
      try {
        for await (const ev of watch) {
          if (ev.type !== "put") continue;
          const ns = JSON.parse(ev.kv.value);
          if (ns.metadata?.deletionTimestamp) {
            this.#pending.add(ns.metadata.name);
            this.#kick();
          }
        }
      } catch (err) {
        if (!this.#abort.signal.aborted) {
          this.#opts.logger.error("namespace controller watch ended", err);
        }
      }
    })();
    this.#kick();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#timer);
    await this.#running;
  }

  #kick(delay = 0): void {
    if (this.#abort.signal.aborted) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#drain(), delay);
  }

  async #drain(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (const name of [...this.#pending]) {
        if (this.#abort.signal.aborted) return;
        try {
          if (await this.#finalize(name)) this.#pending.delete(name);
        } catch (err) {
          this.#opts.logger.warn(`namespace ${name}: cleanup failed, will retry`, err);
        }
      }
    } finally {
      this.#busy = false;
    }
    if (this.#pending.size) this.#kick(this.#opts.retryMs ?? 1000);
  }

  /** One cleanup pass; true when the namespace no longer needs attention. */
  async #finalize(name: string): Promise<boolean> {
    let ns;
    try {
      ns = await this.#opts.namespaces.get("", name);
    } catch {
      return true; // already gone
    }
    if (!ns.metadata.deletionTimestamp) return true;
    let remaining = 0;
    for (const registry of this.#opts.contents()) {
      const res = await registry.deleteCollection(name);
      remaining += res.items.length;
    }
    if (remaining > 0) {
      // Objects with finalizers were only marked; check again once they may be gone.
      const still = await Promise.all(
        this.#opts.contents().map((r) => r.list(name, { limit: 1 })),
      );
      if (still.some((l) => l.items.length)) return false;
    }
    const finalizers: string[] = ns.spec?.finalizers ?? [];
    if (finalizers.includes(NAMESPACE_FINALIZER)) {
      const next = structuredClone(ns);
      next.spec.finalizers = finalizers.filter((f) => f !== NAMESPACE_FINALIZER);
      await this.#opts.namespaces.update("", name, next, SYSTEM_CONTEXT, {
        subresource: "finalize",
      });
    }
    return true;
  }
}

const SYSTEM_CONTEXT = {
  user: {
    username: "system:serviceaccount:platform-system:namespace-controller",
    groups: ["system:serviceaccounts"],
  },
};
