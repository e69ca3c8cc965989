/**
 * Namespace lifecycle: the admission rule (no writes into a missing or terminating namespace)
 * and the controller that empties a terminating namespace, then removes its `kubernetes`
 * finalizer so the namespace itself goes away.
 */

import { type GroupResource, type Logger, notFound } from "../api/mod.ts";
import type { KeyValue, Store } from "../storage/mod.ts";
import { resourcePrefix, ResourceRegistry } from "../registry/mod.ts";
import { NAMESPACE_FINALIZER, NAMESPACE_NAME_LABEL } from "../resources/mod.ts";

/** The namespaces that exist after the first start. */
export const SYSTEM_NAMESPACES = [
  "default",
  "platform-system",
  "platform-public",
  "platform-node-lease",
];

const NAMESPACES_PREFIX = resourcePrefix("", "namespaces");

/** A write into `namespace` is allowed only while it exists and is not terminating. */
export function namespaceGate(store: Store) {
  // Stored values are immutable and replaced on every write: decode each one once.
  const terminating = new WeakMap<KeyValue, boolean>();
  const isTerminating = (kv: KeyValue): boolean => {
    let t = terminating.get(kv);
    if (t === undefined) {
      const ns = JSON.parse(kv.value);
      t = Boolean(ns.metadata?.deletionTimestamp) || ns.status?.phase === "Terminating";
      terminating.set(kv, t);
    }
    return t;
  };
  return async (namespace: string, gr: GroupResource, name: string): Promise<void> => {
    const kv = await store.get(NAMESPACES_PREFIX + namespace);
    if (!kv) throw notFound({ group: "", resource: "namespaces" }, namespace);
    if (isTerminating(kv)) {
      throw ResourceRegistry.terminating(gr, name, namespace);
    }
  };
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
