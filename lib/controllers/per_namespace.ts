/**
 * The machinery of controllers that keep one named object in every active namespace (the
 * `default` ServiceAccount, the `kube-root-ca.crt` ConfigMap): a filtered informer mirrors the
 * kept objects, a queue of namespace names is worked through one at a time, and each pass
 * creates the object when it is missing or puts it right when it was changed.
 *
 * Nothing is created in a namespace that is not Active: a terminating namespace is being
 * emptied by the namespace lifecycle controller, and a create there would only race it.
 */

import { type Logger, parseFieldSelector, StatusError } from "../api/mod.ts";
import {
  Informer,
  type KubeObject,
  type ResourceRegistry,
  type StrategyContext,
  type WatchEvent,
} from "../registry/mod.ts";

/** What one controller keeps in every namespace. */
export interface KeptObject {
  /** The controller's name, as `--controllers` knows it (for logs). */
  controller: string;
  /** Where the kept objects live. */
  objects: ResourceRegistry;
  /** The kept object's name, the same in every namespace. */
  name: string;
  /** The object to create (its name and namespace are set by the keeper). */
  build(): KubeObject;
  /** The object as it should be when `current` needs a change, else undefined. Without it,
   * an existing object is left as it is. */
  repair?(current: KubeObject): KubeObject | undefined;
  /** Who writes. */
  context: StrategyContext;
  /** The field manager of the writes. */
  manager: string;
}

/** Read access to the namespaces (a shared informer's mirror). */
export interface NamespaceLookup {
  get(name: string): KubeObject | undefined;
  names(): Iterable<string>;
}

/** How long a namespace whose pass failed waits before the next try. */
const RETRY_MS = 1_000;

export class NamespaceObjectKeeper {
  readonly #spec: KeptObject;
  readonly #namespaces: NamespaceLookup;
  readonly #logger: Logger;
  readonly #informer: Informer;
  readonly #queue = new Set<string>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #draining?: Promise<void>;
  #stopped = false;

  constructor(spec: KeptObject, namespaces: NamespaceLookup, logger: Logger) {
    this.#spec = spec;
    this.#namespaces = namespaces;
    this.#logger = logger;
    this.#informer = new Informer(spec.objects, {
      logger,
      filter: { fields: parseFieldSelector(`metadata.name=${spec.name}`, ["metadata.name"]) },
      onEvent: (ev) => this.#objectChanged(ev),
    });
  }

  /** Mirrors the kept objects; namespaces come through {@link namespaceChanged}. */
  async start(): Promise<void> {
    await this.#informer.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) clearTimeout(t);
    await this.#informer.stop();
    await this.#draining;
  }

  /** A namespace appeared or changed. */
  namespaceChanged(ev: WatchEvent): void {
    if (ev.type !== "DELETED") this.#enqueue(ev.object.metadata.name);
  }

  /** Looks at every namespace again (what the kept object should be has changed). */
  resyncAll(): void {
    for (const name of this.#namespaces.names()) this.#enqueue(name);
  }

  /** Resolves once the queue is empty (namespaces waiting for a retry aside). */
  async idle(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  #objectChanged(ev: WatchEvent): void {
    // A kept object that is never repaired matters only when it goes away.
    if (ev.type === "DELETED" || this.#spec.repair) {
      this.#enqueue(ev.object.metadata.namespace);
    }
  }

  #enqueue(namespace: string): void {
    if (this.#stopped) return;
    this.#queue.add(namespace);
    this.#draining ??= this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      // Let the event that queued us finish its turn first (informers apply whole batches).
      await Promise.resolve();
      while (this.#queue.size && !this.#stopped) {
        const [namespace] = this.#queue;
        this.#queue.delete(namespace);
        await this.#sync(namespace);
      }
    } finally {
      this.#draining = undefined;
    }
  }

  async #sync(namespace: string): Promise<void> {
    const ns = this.#namespaces.get(namespace);
    if (!ns || ns.metadata.deletionTimestamp || ns.status?.phase !== "Active") return;
    const { objects, name, context, manager } = this.#spec;
    const current = this.#informer.get(`${namespace}/${name}`);
    try {
      if (!current) {
        const obj = this.#spec.build();
        obj.metadata = { ...obj.metadata, name, namespace };
        await objects.create(namespace, obj, context, { manager });
        return;
      }
      const next = this.#spec.repair?.(current);
      if (!next) return;
      await objects.update(namespace, name, next, context, { manager });
    } catch (err) {
      if (this.#stopped) return;
      if (err instanceof StatusError) {
        // Created or changed meanwhile: that write's event brings the namespace back.
        if (err.code === 409) return;
        // The namespace went away or started terminating: nothing to keep there.
        if (err.code === 404 && !current) return;
        if (err.code === 403 && isNamespaceTerminating(err)) return;
        // Deleted between our look and our update: look again (it is created then).
        if (err.code === 404) return this.#enqueue(namespace);
      }
      this.#logger.warn(`${this.#spec.controller} controller: namespace ${namespace}`, err);
      this.#retryLater(namespace);
    }
  }

  #retryLater(namespace: string): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      this.#enqueue(namespace);
    }, RETRY_MS);
    this.#timers.add(t);
  }
}

function isNamespaceTerminating(err: StatusError): boolean {
  return err.details?.causes?.some((c) => c.reason === "NamespaceTerminating") ?? false;
}
