/**
 * The CRD controller: serves what CustomResourceDefinitions define, keeps their status, and
 * empties and removes the ones being deleted.
 *
 * Why `lib/apiextensions/`: custom resources are an API group of their own with a naming
 * check, schema rules and a controller, like `lib/certificates/` for CSRs. `lib/registry/`
 * stays generic: it sees a custom resource only as one more {@link ResourceDefinition} (with
 * `customResource` set) and one more {@link SchemaSet}; nothing here is a special handler.
 *
 * For each CRD, in one queue (one CRD at a time, so catalogue changes never interleave):
 *
 * 1. Names: the requested names are checked against the built-in resources and the other
 *    CRDs of the group (`names.ts`); `status.acceptedNames` and `NamesAccepted` follow.
 * 2. Serving: once all names were accepted the first time, the resource is served: a
 *    definition per served version (from the accepted names and that version's schema,
 *    subresources and conversion), each with a registry over the shared store, put in the
 *    catalogue and the registries map the router reads. Only then is `Established` set
 *    True, so a client that waits for it finds the endpoints. A changed CRD replaces its
 *    definitions in one step (no await between removing the old and adding the new).
 * 3. Deletion: a deleted CRD carries the cleanup finalizer (added by its strategy). The
 *    controller refuses new objects, deletes all of them, records the `Terminating`
 *    condition as Kubernetes does, then removes the finalizer; when the CRD is gone its
 *    endpoints go too.
 *
 * `start()` loads the stored CRDs and serves them before it returns, so a restarted server
 * answers for custom resources from its first request.
 */

import type {
  Catalogue,
  KubeObject,
  RegistryWatch,
  ResourceDefinition,
  ResourceRegistry,
  StrategyContext,
} from "../registry/mod.ts";
import { type SchemaNode, SchemaSet } from "../schema/mod.ts";
import { type Clock, type Logger, rfc3339, StatusError, systemClock } from "../api/mod.ts";
import { CLEANUP_FINALIZER, isConditionTrue, setCondition } from "./conditions.ts";
import { checkNames, namesInUse } from "./names.ts";
import { type CustomResource, customResource } from "./resource.ts";
import { conversionClient } from "./conversion_webhook.ts";
import type { WebhookClient } from "../admission/mod.ts";
import type { HttpClientFactory } from "../egress/mod.ts";

export interface CrdControllerOptions {
  /** The customresourcedefinitions registry. */
  crds: ResourceRegistry;
  catalogue: Catalogue;
  /** The registries the router serves from, by definition; custom ones are added here. */
  registries: Map<ResourceDefinition, ResourceRegistry>;
  /** Makes the registry of a custom resource over the shared store. */
  newRegistry: (def: ResourceDefinition, schemas: SchemaSet) => ResourceRegistry;
  logger: Logger;
  clock?: Clock;
  /** How long to wait before retrying a CRD whose work failed or must wait. @default 1000 */
  retryMs?: number;
  /** Makes the HTTP clients conversion webhooks are called through (the egress dialer's
   * `cluster` selection). @default Deno.createHttpClient: direct */
  createHttpClient?: HttpClientFactory;
}

interface Served extends CustomResource {
  /** The registry of every served version, in `versions` order. */
  registries: ResourceRegistry[];
  /** The storage version's registry: what the objects are deleted through. */
  storageRegistry: ResourceRegistry;
}

const SYSTEM_CONTEXT: StrategyContext = {
  user: {
    username: "system:serviceaccount:platform-system:apiextensions-controller",
    groups: ["system:serviceaccounts"],
  },
};

export class CrdController {
  readonly #opts: CrdControllerOptions;
  readonly #clock: Clock;
  readonly #abort = new AbortController();
  /** The newest state seen of every CRD, by name (for the naming check). */
  readonly #crds = new Map<string, KubeObject>();
  readonly #served = new Map<string, Served>();
  readonly #terminating = new Set<string>();
  readonly #pending = new Set<string>();
  #schemas?: SchemaSet;
  readonly #webhooks: WebhookClient;
  #timer?: ReturnType<typeof setTimeout>;
  #running?: Promise<void>;
  #draining?: Promise<void>;

  constructor(opts: CrdControllerOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? systemClock;
    this.#webhooks = conversionClient(opts.createHttpClient);
  }

  /** Loads the stored CRDs, serves what they define, then follows changes. */
  async start(): Promise<void> {
    const list = await this.#opts.crds.list("");
    for (const crd of list.items) {
      this.#crds.set(crd.metadata.name, crd);
      this.#pending.add(crd.metadata.name);
    }
    await this.#drain();
    this.#running = this.#follow(Number(list.resourceVersion));
  }

  /** Stops following changes; what is served stays served. */
  async stop(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#timer);
    await this.#running;
    await this.#draining;
    this.#webhooks.close();
  }

  /** The built-in schemas plus those of every served custom resource (for OpenAPI). */
  schemas(): SchemaSet {
    if (!this.#schemas) {
      const extra: Record<string, SchemaNode> = {};
      for (const served of this.#served.values()) {
        for (const v of served.versions) extra[v.def.schema] = v.schema;
      }
      this.#schemas = Object.keys(extra).length
        ? SchemaSet.builtin().extend(extra)
        : SchemaSet.builtin();
    }
    return this.#schemas;
  }

  // ---- following changes ----

  async #follow(afterRevision: number): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let watch: RegistryWatch | undefined;
      try {
        watch = this.#opts.crds.watch("", { afterRevision, signal });
        for (;;) {
          const r = await watch.next();
          if (r.done) throw new Error("the watch ended");
          const ev = r.value;
          const name: string = ev.object.metadata.name;
          afterRevision = Math.max(afterRevision, Number(ev.object.metadata.resourceVersion));
          if (ev.type === "DELETED") this.#crds.delete(name);
          else this.#crds.set(name, ev.object);
          this.#enqueueWithPeers(name, ev.object.spec?.group);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.#opts.logger.warn("CRD watch ended, listing again", err);
        await watch?.return();
        // Start over from a fresh list: whatever changed meanwhile is reconciled.
        try {
          const list = await this.#opts.crds.list("");
          afterRevision = Number(list.resourceVersion);
          const names = new Set(list.items.map((c) => c.metadata.name as string));
          for (const name of [...this.#crds.keys(), ...this.#served.keys()]) {
            if (names.has(name)) continue;
            this.#crds.delete(name);
            this.#pending.add(name);
          }
          for (const crd of list.items) {
            this.#crds.set(crd.metadata.name, crd);
            this.#pending.add(crd.metadata.name);
          }
          this.#kick();
        } catch (listErr) {
          this.#opts.logger.warn("CRD list failed", listErr);
        }
        await this.#sleep(this.#opts.retryMs ?? 1000);
      }
    }
  }

  /** Waits `ms`, or less when the controller stops. */
  #sleep(ms: number): Promise<void> {
    const signal = this.#abort.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    });
  }

  /** Queues `name` and the other CRDs of its group (a change of names may unblock them). */
  #enqueueWithPeers(name: string, group: unknown): void {
    this.#pending.add(name);
    for (const [other, crd] of this.#crds) {
      if (other !== name && crd.spec?.group === group) this.#pending.add(other);
    }
    this.#kick();
  }

  #kick(delay = 0): void {
    if (this.#abort.signal.aborted) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#drain(), delay);
  }

  /** Works through the queue, one CRD at a time; failed ones are retried later. */
  #drain(): Promise<void> {
    // `.finally` runs after the assignment even when the work finishes synchronously.
    this.#draining ??= this.#work().finally(() => this.#draining = undefined);
    return this.#draining;
  }

  async #work(): Promise<void> {
    let again = false;
    while (this.#pending.size && !this.#abort.signal.aborted && !again) {
      for (const name of [...this.#pending]) {
        this.#pending.delete(name);
        try {
          if (!await this.#reconcile(name)) {
            this.#pending.add(name);
            again = true;
          }
        } catch (err) {
          this.#pending.add(name);
          // A conflict means a newer CRD to read: go again at once. Other failures wait.
          if (err instanceof StatusError && err.code === 409) continue;
          again = true;
          this.#opts.logger.warn(`CRD ${name}: reconcile failed, will retry`, err);
        }
      }
    }
    if (again) this.#kick(this.#opts.retryMs ?? 1000);
  }

  // ---- one CRD ----

  /** One pass over CRD `name`; false when it needs another pass later. */
  async #reconcile(name: string): Promise<boolean> {
    let crd: KubeObject;
    try {
      crd = await this.#opts.crds.get("", name);
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) {
        this.#crds.delete(name);
        this.#terminating.delete(name);
        this.#unserve(name);
        return true;
      }
      throw err;
    }
    this.#crds.set(name, crd);
    if (crd.metadata.deletionTimestamp) return await this.#cleanup(crd);
    this.#terminating.delete(name);

    const group = crd.spec?.group;
    const others = [...this.#crds].filter(([n]) => n !== name).map(([, c]) => c);
    const used = namesInUse(group, others, this.#opts.catalogue.definitions);
    const naming = checkNames(crd, used);
    const now = rfc3339(this.#clock.now());
    const status: KubeObject = structuredClone(crd.status ?? {});
    status.acceptedNames = naming.acceptedNames;
    setCondition(status, naming.namesAccepted, now);
    if (naming.established.status === "True") {
      // Serve first: Established True promises that the endpoints answer.
      if (!this.#serve(name, { ...crd, status })) {
        naming.established = {
          type: "Established",
          status: "False",
          reason: "NotServed",
          message: "the resource cannot be served",
        };
      }
    } else {
      this.#unserve(name);
    }
    setCondition(status, naming.established, now);
    await this.#writeStatus(crd, status);
    return true;
  }

  /** Serves (or re-serves) what `crd` defines; false when it cannot be served. */
  #serve(name: string, crd: KubeObject): boolean {
    const made = customResource(crd, {
      terminating: () => this.#terminating.has(name),
      conversion: { client: this.#webhooks },
    });
    if (!made) {
      this.#unserve(name);
      return false;
    }
    const current = this.#served.get(name);
    if (current && current.fingerprint === made.fingerprint) return true;
    const { catalogue, registries, newRegistry } = this.#opts;
    const defs = made.versions.map((v) => v.def);
    const madeRegistries = defs.map((def) => newRegistry(def, made.schemas));
    const storageAt = defs.indexOf(made.storage);
    const storageRegistry = storageAt >= 0
      ? madeRegistries[storageAt]
      : newRegistry(made.storage, made.schemas);
    // Old definitions out, new ones in, without an await between: no request sees a mix.
    if (current) { for (const def of current.versions.map((v) => v.def)) catalogue.remove(def); }
    const added: typeof defs = [];
    try {
      for (const def of defs) {
        catalogue.add(def);
        added.push(def);
      }
    } catch (err) {
      for (const def of added) catalogue.remove(def);
      if (current) { for (const v of current.versions) catalogue.add(v.def); }
      this.#opts.logger.warn(`CRD ${name}: cannot serve ${made.storage.plural}`, err);
      return false;
    }
    defs.forEach((def, i) => registries.set(def, madeRegistries[i]));
    if (current) { for (const v of current.versions) registries.delete(v.def); }
    this.#served.set(name, { ...made, registries: madeRegistries, storageRegistry });
    this.#schemas = undefined;
    this.#opts.logger.info(
      `serving ${made.storage.plural}.${made.storage.group} (${made.storage.kind}) at ${
        defs.map((d) => d.version).join(", ")
      }`,
    );
    return true;
  }

  #unserve(name: string): void {
    const served = this.#served.get(name);
    if (!served) return;
    for (const v of served.versions) {
      this.#opts.catalogue.remove(v.def);
      this.#opts.registries.delete(v.def);
    }
    this.#served.delete(name);
    this.#schemas = undefined;
    this.#opts.logger.info(`stopped serving ${served.storage.plural}.${served.storage.group}`);
  }

  /**
   * A CRD being deleted: refuse new objects, delete the existing ones, then release the
   * cleanup finalizer. False while objects remain (they may have finalizers of their own).
   */
  async #cleanup(crd: KubeObject): Promise<boolean> {
    const name: string = crd.metadata.name;
    const finalizers: string[] = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(CLEANUP_FINALIZER)) return true;
    this.#terminating.add(name);
    // After a restart mid-deletion nothing is served yet: serve again to delete the objects.
    if (!this.#served.has(name) && isConditionTrue(crd, "Established")) this.#serve(name, crd);
    const served = this.#served.get(name);
    const now = () => rfc3339(this.#clock.now());
    let status: KubeObject = structuredClone(crd.status ?? {});
    if (served && isConditionTrue(crd, "Established")) {
      setCondition(status, {
        type: "Terminating",
        status: "True",
        reason: "InstanceDeletionInProgress",
        message: "CustomResource deletion is in progress",
      }, now());
      crd = await this.#writeStatus(crd, status);
      await served.storageRegistry.deleteCollection("");
      const left = await served.storageRegistry.list("", { limit: 1 });
      if (left.items.length) {
        status = structuredClone(crd.status ?? {});
        setCondition(status, {
          type: "Terminating",
          status: "True",
          reason: "InstanceDeletionCheck",
          message:
            "could not confirm zero CustomResources remaining: some objects are waiting for their finalizers",
        }, now());
        await this.#writeStatus(crd, status);
        return false;
      }
      status = structuredClone(crd.status ?? {});
      setCondition(status, {
        type: "Terminating",
        status: "False",
        reason: "InstanceDeletionCompleted",
        message: "removed all instances",
      }, now());
    } else {
      setCondition(status, {
        type: "Terminating",
        status: "False",
        reason: "NeverEstablished",
        message: "resource was never established",
      }, now());
    }
    crd = await this.#writeStatus(crd, status);
    const next = structuredClone(crd);
    next.metadata.finalizers = finalizers.filter((f) => f !== CLEANUP_FINALIZER);
    // The registry deletes the CRD once no finalizer holds it; the watch then unserves it.
    await this.#opts.crds.update("", name, next, SYSTEM_CONTEXT);
    return true;
  }

  /** Writes `status` through /status unless it is what `crd` has; returns the CRD as
   * stored. A concurrent write makes it fail with 409 (the CRD is then queued again). */
  async #writeStatus(crd: KubeObject, status: KubeObject): Promise<KubeObject> {
    if (JSON.stringify(status) === JSON.stringify(crd.status ?? {})) return crd;
    const res = await this.#opts.crds.update(
      "",
      crd.metadata.name,
      { ...crd, status },
      SYSTEM_CONTEXT,
      { subresource: "status" },
    );
    this.#crds.set(crd.metadata.name, res.object);
    return res.object;
  }
}
