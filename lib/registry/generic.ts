/**
 * The generic registry: turns one {@link ResourceDefinition} into get, list, create, update,
 * delete, deletecollection and watch over a {@link Store}. It knows nothing of HTTP; it
 * throws {@link StatusError}s and translates storage errors at its boundary.
 *
 * Every write follows the same steps: build the object to store (names, uid, timestamps,
 * generation), run the strategy hooks, validate against the schema and metadata rules, and
 * (unless a dry run) write it with one Store call that returns the new revision.
 */

import {
  alreadyExists,
  badRequest,
  conflict,
  type FieldError,
  forbidden,
  type GroupResource,
  internalError,
  invalid,
  notFound,
  OBJECT_MODIFIED,
  StatusError,
} from "../api/errors.ts";
import { generateName } from "../api/names.ts";
import { validateObjectMeta, validateObjectMetaUpdate } from "../api/meta_validation.ts";
import { type Clock, rfc3339, systemClock } from "../api/time.ts";
import {
  isStoreError,
  type KeyValue,
  type Store,
  type StoreEvent,
  type Watch,
} from "../storage/store.ts";
import { unreadableReason } from "../storage/transformer.ts";
import {
  apiVersionOf,
  type KubeObject,
  type ResourceDefinition,
  type ReviewContext,
  type StrategyContext,
} from "./definition.ts";
import type { SchemaSet, ValidationResult } from "./schema.ts";
import { type FieldType, typeOf } from "./typed.ts";
import { EncodedCache } from "./encoded_cache.ts";
import { patchedObject, type PatchType } from "./patching.ts";
import { applyConfig, type FieldManagerContext, trackUpdate } from "../apply/mod.ts";
import { jsonEqual } from "../api/json.ts";
import { type ObjectFilter, selectsObject } from "./filter.ts";
import { decodeContinue, encodeContinue, randomContinueKey } from "./continue.ts";

export type FieldValidation = "Strict" | "Warn" | "Ignore";

export interface WriteOptions {
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  /** Keys the request body repeats (found in its text; see codec/json_duplicates.ts). */
  duplicateFields?: string[];
  subresource?: string;
  /** The field manager of this write (`fieldManager`, or inferred from the User-Agent). */
  manager?: string;
  /** Called before an apply or a PUT creates a missing object: they need `create` permission
   * then, besides their own verb (authorization hooks in here). */
  beforeCreate?: () => Promise<void> | void;
}

export type { PatchType };

/** A PATCH request: its type, the decoded body, and `force` (apply only). */
export interface PatchRequest {
  type: PatchType;
  body: unknown;
  force?: boolean;
}

export interface WriteResult {
  object: KubeObject;
  /** Warnings for the `Warning` response header (e.g. unknown fields under Warn). */
  warnings: string[];
}

export interface ListOptions {
  filter?: ObjectFilter;
  /** Without a filter, leave `items` empty and return only `sources`: for callers that build
   * the body from per-object encodings cached by stored value ({@link ResourceRegistry.encoded}). */
  sourcesOnly?: boolean;
  limit?: number;
  continue?: string;
  /** Read at this exact revision (must be retained). */
  revision?: number;
}

export interface ListResult {
  items: KubeObject[];
  /** The stored values of the items, in order (all of them under `sourcesOnly`). */
  sources: KeyValue[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
}

/** A watch's events, and how far it has delivered everything (see `ResourceRegistry.watch`). */
export interface RegistryWatch {
  /** The next event; done when the watch ends. Throws the store's watch errors. */
  next(): Promise<IteratorResult<WatchEvent>>;
  /** The next event if one is ready now (see `Watch.poll`). */
  poll(): WatchEvent | undefined;
  /** See `Watch.progress`. */
  progress(): number | undefined;
  /** Stops the watch. */
  return(value?: unknown): Promise<IteratorResult<WatchEvent>>;
}

/** Store events turned into API watch events (some store events turn into none). */
class TransformedWatch implements RegistryWatch {
  readonly #watch: Watch;
  readonly #events: AsyncIterator<StoreEvent>;
  readonly #transform: (ev: StoreEvent) => WatchEvent | undefined;

  constructor(watch: Watch, transform: (ev: StoreEvent) => WatchEvent | undefined) {
    this.#watch = watch;
    this.#events = watch[Symbol.asyncIterator]();
    this.#transform = transform;
  }

  async next(): Promise<IteratorResult<WatchEvent>> {
    for (;;) {
      const r = await this.#events.next();
      if (r.done) return { value: undefined, done: true };
      const ev = this.#transform(r.value);
      if (ev) return { value: ev, done: false };
    }
  }

  poll(): WatchEvent | undefined {
    for (let ev = this.#watch.poll(); ev; ev = this.#watch.poll()) {
      const out = this.#transform(ev);
      if (out) return out;
    }
    return undefined;
  }

  progress(): number | undefined {
    return this.#watch.progress();
  }

  return(): Promise<IteratorResult<WatchEvent>> {
    this.#watch.stop();
    return Promise.resolve({ value: undefined, done: true });
  }
}

export interface DeleteOptions {
  dryRun?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  object: KubeObject;
  /** False while finalizers hold the object (it now has a deletionTimestamp). */
  deleted: boolean;
}

/** Checks that writes into a namespace are allowed (exists and not terminating). */
export type NamespaceGate = (
  namespace: string,
  gr: GroupResource,
  name: string,
) => Promise<void>;

export interface RegistryDeps {
  store: Store;
  schemas: SchemaSet;
  clock?: Clock;
  namespaceGate?: NamespaceGate;
  /** MAC key of continue tokens; give the same key to a store that outlives the process so
   * that tokens survive restarts. Default: random. */
  continueKey?: Uint8Array;
}

/** Store key prefix of a stored resource: `/registry/<group|core>/<resource>/`. */
export function resourcePrefix(group: string, resource: string): string {
  return `/registry/${group || "core"}/${resource}/`;
}

const MAX_GENERATE_ATTEMPTS = 8;

/** kube's message for a continue token whose snapshot is gone. */
export const INCONSISTENT_CONTINUE =
  "The provided continue parameter is too old to display a consistent list result. You can " +
  "start a new list without the continue parameter, or use the continue token in this response " +
  "to retrieve the remainder of the results. Continuing with the provided token results in an " +
  "inconsistent list - objects that were created, modified, or deleted between the time the " +
  "first chunk was returned and now may show up in the list.";

function expiredContinue(token: string): StatusError {
  return new StatusError(410, "Expired", INCONSISTENT_CONTINUE, { listMeta: { continue: token } });
}
const JSON_CACHE_ENTRIES = 4096;
const MAX_UPDATE_RETRIES = 16;

export class ResourceRegistry {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly apiVersion: string;
  readonly #store: Store;
  readonly #schemas: SchemaSet;
  readonly #clock: Clock;
  readonly #namespaceGate?: NamespaceGate;
  readonly #prefix: string;
  readonly #continueKey: Uint8Array;
  /** Insertion-ordered: the first entry is the oldest. */
  readonly #jsonCache = new Map<KeyValue, string>();
  /** Decoded stored values shared by all watchers (each event is decoded once). */
  readonly #watchObjects = new WeakMap<KeyValue, KubeObject>();
  #fieldType?: FieldType;
  /** Encodings of stored values (JSON text, protobuf bytes) made by the read paths, kept as
   * long as the stored value lives: a value never changes, so neither do its encodings. */
  readonly encoded = new EncodedCache();

  constructor(def: ResourceDefinition, deps: RegistryDeps) {
    this.def = def;
    this.gr = { group: def.group, resource: def.plural };
    this.apiVersion = apiVersionOf(def);
    this.#store = deps.store;
    this.#schemas = deps.schemas;
    this.#clock = deps.clock ?? systemClock;
    this.#namespaceGate = deps.namespaceGate;
    this.#continueKey = deps.continueKey ?? randomContinueKey();
    this.#prefix = def.storage
      ? resourcePrefix(def.storage.group, def.storage.resource)
      : resourcePrefix(def.group, def.plural);
  }

  /** The store key of one object. Names are validated before they get here. */
  key(namespace: string, name: string): string {
    return this.def.namespaced ? `${this.#prefix}${namespace}/${name}` : `${this.#prefix}${name}`;
  }

  /** The store prefix of a list: one namespace, or all objects of the resource. */
  listPrefix(namespace: string): string {
    return this.def.namespaced && namespace ? `${this.#prefix}${namespace}/` : this.#prefix;
  }

  // ---- reads ----

  /** The object as stored now. 404 NotFound when missing. */
  async get(
    namespace: string,
    name: string,
    opts: { revision?: number } = {},
  ): Promise<KubeObject> {
    return this.decode(await this.getStored(namespace, name, opts));
  }

  /** The stored value of the object (for encodings cached per value, see `encoded`). 404
   * NotFound when missing. */
  async getStored(
    namespace: string,
    name: string,
    opts: { revision?: number } = {},
  ): Promise<KeyValue> {
    const kv = await this.#read(() => this.#store.get(this.key(namespace, name), opts));
    if (!kv) throw notFound(this.gr, name);
    return kv;
  }

  /**
   * A consistent list: every page of a chunked list reads at the revision of the first page.
   * `remainingItemCount` is given only without a filter. A continue token whose revision is no
   * longer retained is 410 Expired, with a token that continues at the newest revision.
   */
  async list(namespace: string, opts: ListOptions = {}): Promise<ListResult> {
    const prefix = this.listPrefix(namespace);
    let revision = opts.revision;
    let after: string | undefined;
    let returned = 0;
    let total: number | undefined;
    if (opts.continue) {
      const point = decodeContinue(this.#continueKey, prefix, opts.continue);
      after = point.after;
      returned = point.returned;
      if (point.total >= 0) total = point.total;
      if (point.revision === -1) {
        revision = undefined;
        total = undefined;
      } else if (point.revision < this.#store.oldestRevision()) {
        const again = { ...point, revision: -1, total: -1 };
        throw expiredContinue(encodeContinue(this.#continueKey, prefix, again));
      } else {
        revision = point.revision;
      }
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    // Later pages know the total from the first: the store need not count what is left.
    const countRemaining = !opts.filter && total === undefined;
    const items: KubeObject[] = [];
    const sources: KeyValue[] = [];
    const lazy = opts.sourcesOnly === true && !opts.filter;
    let listRevision = 0;
    let lastKey: string | undefined;
    let more = false;
    let remaining = 0;
    // With a filter a page may need several store reads to fill `limit` matching items.
    for (;;) {
      const batch = limit ? Math.max(limit - sources.length, opts.filter ? 256 : 0) : 0;
      const res = await this.#read(() =>
        this.#store.list(prefix, { revision, after, limit: batch || undefined, countRemaining })
      );
      listRevision = res.revision;
      revision = res.revision;
      for (let i = 0; i < res.items.length; i++) {
        const kv = res.items[i];
        lastKey = kv.key;
        if (!lazy) {
          const obj = this.decode(kv);
          if (opts.filter && !selectsObject(opts.filter, obj, this.def)) continue;
          items.push(obj);
        }
        sources.push(kv);
        if (limit && sources.length >= limit) {
          more = i < res.items.length - 1 || res.remaining > 0;
          remaining = res.remaining + (res.items.length - 1 - i);
          break;
        }
      }
      if ((limit && sources.length >= limit) || res.remaining === 0 || !res.items.length) break;
      after = lastKey;
    }
    const result: ListResult = { items, sources, resourceVersion: String(listRevision) };
    if (more && lastKey !== undefined) {
      if (!opts.filter) {
        total ??= returned + sources.length + remaining;
        result.remainingItemCount = total - returned - sources.length;
      }
      result.continue = encodeContinue(this.#continueKey, prefix, {
        revision: listRevision,
        after: lastKey,
        returned: returned + sources.length,
        total: total ?? -1,
      });
    }
    return result;
  }

  /**
   * The object as JSON text (what a plain GET answers), from a small cache of recent
   * encodings: stored values are immutable, so an encoding stays right until the object
   * changes, when its entry is simply never asked for again and ages out.
   */
  getJson(namespace: string, name: string): Promise<string> {
    // One promise step (every GET comes here): no async frames around the store's read.
    return this.#store.get(this.key(namespace, name)).then(
      (kv) => this.#jsonOf(kv, name),
      (err) => Promise.reject(this.#translate(err, "")),
    );
  }

  #jsonOf(kv: KeyValue | undefined, name: string): string {
    if (!kv) throw notFound(this.gr, name);
    let text = this.#jsonCache.get(kv);
    if (text === undefined) {
      text = JSON.stringify(this.decode(kv)) + "\n";
      if (this.#jsonCache.size >= JSON_CACHE_ENTRIES) {
        this.#jsonCache.delete(this.#jsonCache.keys().next().value!);
      }
      this.#jsonCache.set(kv, text);
    }
    return text;
  }

  /** Stored value -> the object in this definition's version, with its resourceVersion. */
  decode(kv: KeyValue): KubeObject {
    const unreadable = unreadableReason(kv.value);
    if (unreadable !== undefined) {
      throw internalError(`unable to transform key ${JSON.stringify(kv.key)}: ${unreadable}`);
    }
    let obj = JSON.parse(kv.value) as KubeObject;
    if (this.def.storage) obj = this.def.storage.conversion.fromStorage(obj);
    obj.metadata ??= {};
    obj.metadata.resourceVersion = String(kv.modRevision);
    return obj;
  }

  #encode(obj: KubeObject): string {
    const stored = this.def.storage ? this.def.storage.conversion.toStorage(obj) : obj;
    const metadata = { ...stored.metadata };
    delete metadata.resourceVersion;
    return JSON.stringify({ ...stored, metadata });
  }

  /**
   * Changes after `afterRevision` as watch events. With a filter, an object that starts
   * matching arrives as ADDED and one that stops matching as DELETED. Throws `Compacted` /
   * `FutureRevision` store errors at once; `progress()` tells up to which revision every event
   * has been delivered (what a bookmark may say). Event objects are shared between watchers:
   * read them, never change them.
   */
  watch(
    namespace: string,
    opts: { afterRevision: number; filter?: ObjectFilter; signal?: AbortSignal },
  ): RegistryWatch {
    const w = this.#store.watch(this.listPrefix(namespace), {
      afterRevision: opts.afterRevision,
      signal: opts.signal,
    });
    const selects = (o: KubeObject) => !opts.filter || selectsObject(opts.filter, o, this.def);
    const shared = (kv: KeyValue) => {
      let obj = this.#watchObjects.get(kv);
      if (!obj) this.#watchObjects.set(kv, obj = this.decode(kv));
      return obj;
    };
    const transform = (ev: StoreEvent): WatchEvent | undefined => {
      const obj = shared(ev.kv);
      if (ev.type === "delete") return selects(obj) ? { type: "DELETED", object: obj } : undefined;
      const now = selects(obj);
      const before = ev.prevKv ? selects(shared(ev.prevKv)) : false;
      if (now && before) return { type: "MODIFIED", object: obj };
      if (now) return { type: "ADDED", object: obj };
      if (before) return { type: "DELETED", object: obj };
      return undefined;
    };
    return new TransformedWatch(w, transform);
  }

  /** The store's newest revision. */
  currentRevision(): number {
    return this.#store.currentRevision();
  }

  /** The oldest revision the store still serves reads and watches at. */
  oldestRevision(): number {
    return this.#store.oldestRevision();
  }

  // ---- create ----

  /** Creates `body` in `namespace`. 409 AlreadyExists, 422 Invalid, 404/403 for a missing or
   * terminating namespace. Returns the stored object (or what would be stored, on dry run).
   * Takes ownership of `body`: it becomes the returned object. */
  create(
    namespace: string,
    body: KubeObject,
    ctx: StrategyContext,
    opts: WriteOptions = {},
  ): Promise<WriteResult> {
    return this.#create(namespace, body, ctx, opts, true);
  }

  /** Create; `track` false when the managed fields are already computed (apply). */
  async #create(
    namespace: string,
    body: KubeObject,
    ctx: StrategyContext,
    opts: WriteOptions,
    track: boolean,
  ): Promise<WriteResult> {
    const obj = this.#checkBody(body);
    const meta = obj.metadata;
    if (this.def.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    // Server-owned fields are never taken from the client on create.
    for (const f of SERVER_FIELDS) delete meta[f];
    if (meta.name === "") delete meta.name;
    const generated = !meta.name && typeof meta.generateName === "string" && meta.generateName;
    if (generated) meta.name = generateName(meta.generateName);
    meta.uid = crypto.randomUUID();
    meta.creationTimestamp = rfc3339(this.#clock.now());
    meta.generation = 1;
    const typeCheck = this.#checkTypes(obj);
    this.def.strategy?.prepareForCreate?.(obj, ctx);
    if (track) trackUpdate(undefined, obj, this.#managerContext(opts, undefined, obj));
    const warnings = await this.#validate(
      obj,
      opts,
      async () => await this.def.strategy?.validateCreate?.(obj, ctx) ?? [],
      { typeCheck },
    );
    if (this.def.namespaced && this.#namespaceGate) {
      await this.#namespaceGate(namespace, this.gr, meta.name ?? "");
    }
    const reservation = await this.def.strategy?.beginCreate?.(obj, ctx, {
      dryRun: opts.dryRun === true,
    });
    try {
      if (opts.dryRun) {
        if (await this.#store.get(this.key(namespace, meta.name))) {
          throw alreadyExists(this.gr, meta.name);
        }
        return { object: obj, warnings };
      }
      for (let attempt = 1;; attempt++) {
        try {
          const kv = await this.#store.create(this.key(namespace, meta.name), this.#encode(obj));
          meta.resourceVersion = String(kv.modRevision);
          await reservation?.commit();
          return { object: obj, warnings };
        } catch (err) {
          if (!isStoreError(err, "KeyExists")) throw this.#translate(err, meta.name);
          if (!generated || attempt >= MAX_GENERATE_ATTEMPTS) {
            throw alreadyExists(this.gr, meta.name);
          }
          meta.name = generateName(meta.generateName);
        }
      }
    } catch (err) {
      await reservation?.revert();
      throw err;
    }
  }

  // ---- update ----

  /**
   * Replaces the object (or, with `subresource`, only the part that subresource owns).
   * A body `metadata.resourceVersion` makes it conditional (409 when stale); without one the
   * update retries on concurrent writes. PUT of a missing object creates it (main resource
   * only). An update that changes nothing writes nothing and returns the stored object.
   * Takes ownership of `body`.
   */
  async update(
    namespace: string,
    name: string,
    body: KubeObject,
    ctx: StrategyContext,
    opts: WriteOptions = {},
  ): Promise<WriteResult & { created: boolean }> {
    const input = this.#checkBody(body);
    this.#checkName(input, name);
    const subresource = opts.subresource ?? "";
    const key = this.key(namespace, name);
    for (let attempt = 0;; attempt++) {
      const kv = await this.#read(() => this.#store.get(key));
      if (!kv) {
        if (subresource) throw notFound(this.gr, name);
        if (input.metadata.resourceVersion) throw notFound(this.gr, name);
        await opts.beforeCreate?.();
        const res = await this.create(namespace, input, ctx, opts);
        return { ...res, created: true };
      }
      const old = this.decode(kv);
      const wanted = input.metadata.resourceVersion;
      if (wanted && wanted !== old.metadata.resourceVersion) {
        throw conflict(this.gr, name, OBJECT_MODIFIED);
      }
      const res = await this.#replace(kv, old, structuredClone(input), ctx, opts, {
        conditional: !!wanted,
        applied: false,
        lastAttempt: attempt >= MAX_UPDATE_RETRIES,
      });
      if (res) return { ...res, created: false };
    }
  }

  // ---- patch ----

  /**
   * Patches the stored object (JSON Patch, merge patch, strategic merge patch) or applies a
   * configuration (server-side apply), then writes the result like an update. A
   * `metadata.resourceVersion` in the patch makes it conditional. A missing object is 404,
   * except for apply, which creates it. `patch.body` is the decoded request body.
   */
  async patch(
    namespace: string,
    name: string,
    patch: PatchRequest,
    ctx: StrategyContext,
    opts: WriteOptions = {},
  ): Promise<WriteResult & { created: boolean }> {
    const subresource = opts.subresource ?? "";
    const key = this.key(namespace, name);
    const config = patch.type === "apply" ? this.#checkApplyConfig(patch.body, name) : undefined;
    for (let attempt = 0;; attempt++) {
      const kv = await this.#read(() => this.#store.get(key));
      if (!kv) {
        if (!config || subresource) throw notFound(this.gr, name);
        if (config.metadata.resourceVersion) throw notFound(this.gr, name);
        await opts.beforeCreate?.();
        // applyConfig copies what it takes from the configuration and never changes it.
        const obj = applyConfig(undefined, config, {
          ...this.#managerContext(opts, undefined, config),
          force: patch.force ?? false,
        });
        const res = await this.#create(namespace, obj, ctx, opts, false);
        return { ...res, created: true };
      }
      const old = this.decode(kv);
      let input: KubeObject;
      let wanted: string | undefined;
      if (config) {
        wanted = config.metadata.resourceVersion;
        if (wanted && wanted !== old.metadata.resourceVersion) {
          throw conflict(this.gr, name, OBJECT_MODIFIED);
        }
        // The result shares unchanged subtrees with `old`: copy before the write path mutates it.
        input = structuredClone(applyConfig(old, config, {
          ...this.#managerContext(opts, old, config),
          force: patch.force ?? false,
        }));
      } else {
        input = patchedObject(
          patch.type as Exclude<PatchType, "apply">,
          old,
          patch.body,
          this.fieldType(),
        );
        input = this.#checkBody(input);
        this.#checkName(input, name);
        // A patch that sets another resourceVersion than the stored one is stale. One that
        // sets the stored one, or none, proceeds; after a concurrent write the retry patches
        // the new object, and a patch naming the old version then fails here.
        const rv = input.metadata.resourceVersion;
        if (rv !== undefined && rv !== old.metadata.resourceVersion) {
          throw conflict(this.gr, name, OBJECT_MODIFIED);
        }
        delete input.metadata.resourceVersion;
      }
      const res = await this.#replace(kv, old, input, ctx, opts, {
        conditional: !!wanted,
        applied: !!config,
        lastAttempt: attempt >= MAX_UPDATE_RETRIES,
      });
      if (res) return { ...res, created: false };
    }
  }

  /** The structural view of this resource's schema (for patches and managed fields). */
  fieldType(): FieldType {
    return this.#fieldType ??= typeOf(this.#schemas, this.def.schema);
  }

  /**
   * Writes `input` over the stored `old` (read as `kv`): server-owned fields, strategy,
   * managed fields, validation, then one conditional store update. Undefined means a
   * concurrent write got in first and the caller should read again and retry.
   */
  async #replace(
    kv: KeyValue,
    old: KubeObject,
    input: KubeObject,
    ctx: StrategyContext,
    opts: WriteOptions,
    how: { conditional: boolean; applied: boolean; lastAttempt: boolean },
  ): Promise<WriteResult | undefined> {
    const subresource = opts.subresource ?? "";
    this.#checkTypes(input);
    const managed = input.metadata.managedFields;
    const obj = this.#prepareUpdate(input, old, { ...ctx, subresource });
    if (how.applied) {
      // Apply computed the managed fields already; a subresource keeps only its part of the
      // input, so carry them over.
      if (managed === undefined) delete obj.metadata.managedFields;
      else obj.metadata.managedFields = managed;
    } else {
      trackUpdate(old, obj, this.#managerContext(opts, old, obj));
    }
    const warnings = await this.#validate(obj, opts, async () => [
      ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...await this.def.strategy?.validateUpdate?.(obj, old, { ...ctx, subresource }) ?? [],
    ]);
    const reservation = subresource ? undefined : await this.def.strategy?.beginUpdate?.(
      obj,
      old,
      { ...ctx, subresource },
      { dryRun: opts.dryRun === true },
    );
    try {
      const res = await this.#write(kv, old, obj, opts, how);
      if (res?.deleted) await this.def.strategy?.afterDelete?.(res.object);
      if (res?.stored) await reservation?.commit();
      else await reservation?.revert();
      return res && { object: res.object, warnings };
    } catch (err) {
      await reservation?.revert();
      throw err;
    }
  }

  /** The store write of {@link #replace}: undefined to retry, else what happened. */
  async #write(
    kv: KeyValue,
    old: KubeObject,
    obj: KubeObject,
    opts: WriteOptions,
    how: { conditional: boolean; lastAttempt: boolean },
  ): Promise<{ object: KubeObject; stored: boolean; deleted?: boolean } | undefined> {
    const name = old.metadata.name;
    // An unchanged object is not written again, unless its stored form is outdated (another
    // encryption key): rewriting it is how keys are rotated (kube: `kubectl replace`).
    if (this.#sameStoredState(obj, old) && !this.#store.isStale?.(kv)) {
      return { object: old, stored: false };
    }
    const retry = (err: unknown) =>
      !how.conditional && !how.lastAttempt &&
      (isStoreError(err, "Conflict") || isStoreError(err, "NotFound"));
    if (obj.metadata.deletionTimestamp && !this.#finalizersPending(obj)) {
      // The last finalizer is gone: the pending deletion completes now.
      if (opts.dryRun) return { object: obj, stored: false };
      try {
        const gone = await this.#store.delete(kv.key, kv.modRevision);
        obj.metadata.resourceVersion = String(gone.modRevision);
        return { object: obj, stored: false, deleted: true };
      } catch (err) {
        if (retry(err)) return undefined;
        throw this.#translate(err, name);
      }
    }
    if (opts.dryRun) return { object: obj, stored: false };
    try {
      const next = await this.#store.update(kv.key, this.#encode(obj), kv.modRevision);
      obj.metadata.resourceVersion = String(next.modRevision);
      return { object: obj, stored: true };
    } catch (err) {
      if (retry(err)) return undefined;
      throw this.#translate(err, name);
    }
  }

  /** What managed-fields tracking needs to know about this write. */
  #managerContext(
    opts: WriteOptions,
    old: KubeObject | undefined,
    obj: KubeObject,
  ): FieldManagerContext {
    const subresource = opts.subresource ?? "";
    let ignoredFields: string[] = [];
    if (subresource === "status") {
      // /status neither changes nor owns anything but status.
      const fields = new Set([...Object.keys(old ?? {}), ...Object.keys(obj)]);
      ignoredFields = [...fields].filter((f) => !STATUS_KEEPS.has(f));
    } else if (!subresource && this.def.subresources?.includes("status")) {
      ignoredFields = ["status"];
    }
    return {
      type: this.fieldType(),
      manager: opts.manager ?? DEFAULT_MANAGER,
      apiVersion: this.apiVersion,
      subresource,
      now: rfc3339(this.#clock.now()),
      ignoredFields,
      emptyObject: this.def.emptyObject,
    };
  }

  /** An apply configuration: an object of this kind and version, without managedFields. */
  #checkApplyConfig(body: unknown, name: string): KubeObject {
    if (!body || typeof body !== "object" || Array.isArray(body)) {
      throw badRequest(`the apply configuration must be a ${this.def.kind} object`);
    }
    const config = body as KubeObject;
    if (config.apiVersion !== this.apiVersion) {
      throw badRequest(
        `Incorrect version specified in apply patch. Specified patch version: ${
          config.apiVersion ?? ""
        }, expected: ${this.apiVersion}`,
      );
    }
    if (config.kind !== this.def.kind) {
      throw badRequest(
        `Incorrect kind specified in apply patch. Specified patch kind: ${
          config.kind ?? ""
        }, expected: ${this.def.kind}`,
      );
    }
    if (config.metadata === undefined || config.metadata === null) config.metadata = {};
    if (typeof config.metadata !== "object" || Array.isArray(config.metadata)) {
      throw badRequest("metadata must be an object");
    }
    if (config.metadata.managedFields !== undefined && config.metadata.managedFields !== null) {
      throw badRequest("metadata.managedFields must be nil");
    }
    this.#checkName(config, name);
    return config;
  }

  #checkName(obj: KubeObject, name: string): void {
    if (obj.metadata.name && obj.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    obj.metadata.name = name;
  }

  /** Builds the object to store from the client's `obj` and the stored `old`. */
  #prepareUpdate(obj: KubeObject, old: KubeObject, ctx: StrategyContext): KubeObject {
    const meta = obj.metadata;
    // A uid the client sends must match (validation says so); a missing one is the stored one.
    if (!meta.uid) meta.uid = old.metadata.uid;
    // Other server-owned metadata always comes from the stored object.
    for (
      const f of [
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
      ]
    ) {
      if (old.metadata[f] === undefined) delete meta[f];
      else meta[f] = old.metadata[f];
    }
    if (this.def.namespaced) meta.namespace = old.metadata.namespace;
    delete meta.resourceVersion;
    if (ctx.subresource === "status") {
      // /status changes only status: everything else is the stored object.
      const next = structuredClone(old);
      delete next.metadata.resourceVersion;
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
      this.def.strategy?.prepareForUpdate?.(next, old, ctx);
      return next;
    }
    if (ctx.subresource && ctx.subresource !== "finalize") {
      const next = structuredClone(old);
      delete next.metadata.resourceVersion;
      if (obj.status !== undefined) next.status = obj.status;
      // The resource decides what else its subresource may change (a CSR's /approval: only
      // the Approved and Denied conditions).
      this.def.strategy?.prepareForUpdate?.(next, old, ctx);
      return next;
    }
    const hasStatus = this.def.subresources?.includes("status");
    if (hasStatus && ctx.subresource !== "finalize") {
      // The main resource cannot change status when a status subresource exists.
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    }
    this.def.strategy?.prepareForUpdate?.(obj, old, ctx);
    if (this.#specChanged(obj, old)) meta.generation = (old.metadata.generation ?? 0) + 1;
    if (meta.deletionTimestamp && Array.isArray(meta.finalizers)) {
      // Once deleting, finalizers may only be removed, never added.
      const before = new Set<string>(old.metadata.finalizers ?? []);
      const added = meta.finalizers.filter((f: string) => !before.has(f));
      if (added.length) {
        throw invalid(this.def.kind, this.def.group, old.metadata.name, [{
          type: "Forbidden",
          field: "metadata.finalizers",
          detail:
            `no new finalizers can be added if the object is being deleted, found new finalizers ${
              JSON.stringify(added)
            }`,
        }]);
      }
    }
    return obj;
  }

  #specChanged(obj: KubeObject, old: KubeObject): boolean {
    const fields = this.def.strategy?.specFields ??
      [...new Set([...Object.keys(obj), ...Object.keys(old)])].filter((f) =>
        !["apiVersion", "kind", "metadata", "status"].includes(f)
      );
    return fields.some((f) => JSON.stringify(obj[f]) !== JSON.stringify(old[f]));
  }

  /** `obj` would store what is stored (key order aside: apply may reorder keys). */
  #sameStoredState(obj: KubeObject, old: KubeObject): boolean {
    const a = { ...old, metadata: { ...old.metadata } };
    delete a.metadata.resourceVersion;
    return jsonEqual(obj, a);
  }

  #finalizersPending(obj: KubeObject): boolean {
    const meta = obj.metadata ?? {};
    if (Array.isArray(meta.finalizers) && meta.finalizers.length) return true;
    return this.def.strategy?.finalizersPending?.(obj) ?? false;
  }

  // ---- delete ----

  /**
   * Deletes one object. Preconditions (uid, resourceVersion) give 409 when they do not match.
   * With finalizers the object is only marked (deletionTimestamp) and stays until they are
   * removed; the result says which happened.
   */
  async delete(namespace: string, name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    const key = this.key(namespace, name);
    for (let attempt = 0;; attempt++) {
      const kv = await this.#read(() => this.#store.get(key));
      if (!kv) throw notFound(this.gr, name);
      const obj = this.decode(kv);
      const pre = opts.preconditions ?? {};
      if (pre.uid && pre.uid !== obj.metadata.uid) {
        throw conflict(
          this.gr,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`,
        );
      }
      if (pre.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
        throw conflict(
          this.gr,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`,
        );
      }
      if (this.#finalizersPending(obj)) {
        if (obj.metadata.deletionTimestamp) return { object: obj, deleted: false };
        obj.metadata.deletionTimestamp = rfc3339(this.#clock.now());
        obj.metadata.deletionGracePeriodSeconds = 0;
        this.def.strategy?.prepareForDelete?.(obj);
        if (opts.dryRun) return { object: obj, deleted: false };
        try {
          const next = await this.#store.update(key, this.#encode(obj), kv.modRevision);
          obj.metadata.resourceVersion = String(next.modRevision);
          return { object: obj, deleted: false };
        } catch (err) {
          if (isStoreError(err, "Conflict") && attempt < MAX_UPDATE_RETRIES) continue;
          throw this.#translate(err, name);
        }
      }
      if (opts.dryRun) return { object: obj, deleted: true };
      try {
        const gone = await this.#store.delete(key, kv.modRevision);
        obj.metadata.resourceVersion = String(gone.modRevision);
        await this.def.strategy?.afterDelete?.(obj);
        return { object: obj, deleted: true };
      } catch (err) {
        if (isStoreError(err, "Conflict") && attempt < MAX_UPDATE_RETRIES) continue;
        throw this.#translate(err, name);
      }
    }
  }

  /** Deletes every object the filter selects; returns them (as deleted or as marked). */
  async deleteCollection(
    namespace: string,
    opts: { filter?: ObjectFilter; dryRun?: boolean } = {},
  ): Promise<Pick<ListResult, "items" | "resourceVersion">> {
    const listed = await this.list(namespace, { filter: opts.filter });
    const items: KubeObject[] = [];
    for (const obj of listed.items) {
      try {
        const res = await this.delete(obj.metadata.namespace ?? "", obj.metadata.name, {
          dryRun: opts.dryRun,
          preconditions: { uid: obj.metadata.uid },
        });
        items.push(res.object);
      } catch (err) {
        // Deleted or replaced meanwhile: not ours to delete any more.
        if (err instanceof StatusError && (err.code === 404 || err.code === 409)) continue;
        throw err;
      }
    }
    return { items, resourceVersion: String(this.#store.currentRevision()) };
  }

  // ---- computed resources ----

  /**
   * A create on a computed resource ({@link ResourceDefinition.review}): the body is checked
   * as a create's (kind, types, unknown fields, the strategy's validation), then the
   * definition computes the answer; nothing is stored.
   */
  async review(body: KubeObject, ctx: ReviewContext, opts: WriteOptions = {}): Promise<
    WriteResult
  > {
    const obj = this.#checkBody(body);
    // The answer's status is computed: what the client sent there (kube's typed clients send
    // an empty one) is not validated.
    delete obj.status;
    const typeCheck = this.#checkTypes(obj);
    const warnings = await this.#validate(
      obj,
      opts,
      async () => await this.def.strategy?.validateCreate?.(obj, ctx) ?? [],
      { checkMeta: false, typeCheck },
    );
    const out = await this.def.review!(obj, ctx);
    out.apiVersion = this.apiVersion;
    out.kind = this.def.kind;
    return { object: out, warnings };
  }

  // ---- shared steps ----

  /** A body must be an object of this kind; apiVersion/kind are defaulted when absent. */
  #checkBody(body: unknown): KubeObject {
    if (!body || typeof body !== "object" || Array.isArray(body)) {
      throw badRequest(`the body of the request must be a ${this.def.kind} object`);
    }
    // The caller hands the body over (it is freshly decoded): no copy.
    const obj = body as KubeObject;
    if (obj.kind !== undefined && obj.kind !== "" && obj.kind !== this.def.kind) {
      throw badRequest(
        `the kind in the body (${obj.kind}) does not match the kind of the resource (${this.def.kind})`,
      );
    }
    if (
      obj.apiVersion !== undefined && obj.apiVersion !== "" && obj.apiVersion !== this.apiVersion
    ) {
      throw badRequest(
        `the API version in the data (${obj.apiVersion}) does not match the expected API version (${this.apiVersion})`,
      );
    }
    obj.apiVersion = this.apiVersion;
    obj.kind = this.def.kind;
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (typeof obj.metadata !== "object" || Array.isArray(obj.metadata)) {
      throw invalid(this.def.kind, this.def.group, "", [{
        type: "TypeInvalid",
        field: "metadata",
        value: obj.metadata,
        detail: "must be of type object",
      }]);
    }
    return obj;
  }

  /** Wrong types are refused before any strategy hook sees the object (kube fails them at
   * decoding), so hooks can rely on the schema's types. */
  #checkTypes(obj: KubeObject): ValidationResult {
    const res = this.#schemas.validate(obj, this.def.schema);
    const wrong = res.errors.filter((e) => e.type === "TypeInvalid");
    if (wrong.length) throw invalid(this.def.kind, this.def.group, obj.metadata?.name ?? "", wrong);
    return res;
  }

  /**
   * Schema, metadata and strategy validation. Unknown and duplicate fields fail under Strict
   * (400), become warnings under Warn (the default) and are dropped silently under Ignore.
   */
  async #validate(
    obj: KubeObject,
    opts: WriteOptions,
    extra: () => Promise<FieldError[]>,
    how: { checkMeta?: boolean; typeCheck?: ValidationResult } = {},
  ): Promise<string[]> {
    const mode = opts.fieldValidation ?? "Warn";
    // Between a create's type check and here only server-set fields change (the strategy's
    // preparation, managed fields): a clean pass then stands, and its unknown fields are
    // those the client sent, as kube's decoder reports them. Errors are looked for again.
    const res = how.typeCheck && how.typeCheck.errors.length === 0
      ? how.typeCheck
      : this.#schemas.validate(obj, this.def.schema);
    const problems = [
      ...(opts.duplicateFields ?? []).map((f) => `duplicate field "${f}"`),
      ...res.unknownFields.map((f) => `unknown field "${f}"`),
    ];
    if (problems.length && mode === "Strict") {
      throw badRequest(
        `${this.def.kind} in version "${this.def.version}" cannot be handled as a ${this.def.kind}: strict decoding error: ${
          problems.join(", ")
        }`,
      );
    }
    const warnings = mode === "Warn" ? problems : [];
    if (res.unknownFields.length) this.#schemas.prune(obj, this.def.schema);
    const errors: FieldError[] = [...res.errors];
    if (how.checkMeta ?? true) {
      errors.push(
        ...validateObjectMeta(obj.metadata, {
          namespaced: this.def.namespaced,
          nameFn: this.def.nameValidation ?? "dns1123Subdomain",
        }),
      );
    }
    errors.push(...await extra());
    if (errors.length) {
      throw invalid(this.def.kind, this.def.group, obj.metadata?.name ?? "", dedupe(errors));
    }
    return warnings;
  }

  async #read<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.#translate(err, "");
    }
  }

  /** Storage errors -> API errors. */
  #translate(err: unknown, name: string): unknown {
    if (err instanceof StatusError) return err;
    if (isStoreError(err, "KeyExists")) return alreadyExists(this.gr, name);
    if (isStoreError(err, "NotFound")) return notFound(this.gr, name);
    if (isStoreError(err, "Conflict")) return conflict(this.gr, name, OBJECT_MODIFIED);
    if (isStoreError(err, "Compacted")) {
      return new StatusError(
        410,
        "Expired",
        "The resourceVersion for the provided list is too old.",
      );
    }
    return err;
  }

  /** Forbidden for writes into a terminating namespace, in kube's words. */
  static terminating(gr: GroupResource, name: string, namespace: string): StatusError {
    const why =
      `unable to create new content in namespace ${namespace} because it is being terminated`;
    return forbidden(gr, name, why, [{
      reason: "NamespaceTerminating",
      message: why,
      field: "metadata.namespace",
    }]);
  }
}

/** The field manager of writes that name none (the server's own controllers). */
const DEFAULT_MANAGER = "platform";

/** What a `/status` write may change and own: status, plus the identity of the object. */
const STATUS_KEEPS = new Set(["apiVersion", "kind", "metadata", "status"]);

const SERVER_FIELDS = [
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "generation",
  "selfLink",
];

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const k = `${e.type}|${e.field}|${e.detail}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
