/**
 * The generic registry: turns one {@link ResourceDefinition} into get, list, create, update,
 * patch, delete, deletecollection and watch over a `Store`. It knows nothing of HTTP; it
 * throws {@link StatusError}s and translates storage errors at its boundary.
 *
 * {@link ResourceRegistry} is the one class callers use. It holds a {@link RegistryCore} (the
 * definition, the store, keys, decoding and the per-stored-value encodings) and answers each
 * verb with a function of the module that holds that concern: list.ts (pages and continue
 * tokens), watch.ts, create.ts, update.ts (updates, patches, apply), delete.ts (finalizers),
 * review.ts (computed resources); validation.ts, managed_fields.ts and prepare_update.ts are
 * the steps writes share. Every write builds the object to store, runs the strategy hooks,
 * validates it and (unless a dry run) writes it with one Store call.
 */

import { type GroupResource, notFound } from "../api/mod.ts";
import type { KeyValue, ReadOptions } from "../storage/mod.ts";
import type {
  KubeObject,
  ResourceDefinition,
  ReviewContext,
  StrategyContext,
} from "./definition.ts";
import type { EncodedCache } from "./encoded_cache.ts";
import type { FieldType } from "../schema/mod.ts";
import { RegistryCore, type RegistryDeps } from "./core.ts";
import { listObjects, type ListOptions, type ListResult } from "./list.ts";
import { type RegistryWatch, watchObjects, type WatchOptions } from "./watch.ts";
import { createObject } from "./create.ts";
import { patchObject, updateObject } from "./update.ts";
import { deleteCollection, deleteObject } from "./delete.ts";
import { deleteCorruptObject } from "./unsafe_delete.ts";
import { reviewObject } from "./review.ts";
import { getScale, type ScaleChange, updateScale } from "./scale.ts";
import type {
  CreateOptions,
  DeleteCollectionOptions,
  DeleteOptions,
  DeleteResult,
  PatchOptions,
  PatchRequest,
  ReviewOptions,
  UpdateOptions,
  UpsertResult,
  WriteResult,
} from "./write_options.ts";

export { type RegistryDeps, resourcePrefix } from "./core.ts";
export { INCONSISTENT_CONTINUE, type ListOptions, type ListResult } from "./list.ts";
export type { RegistryWatch, WatchEvent, WatchOptions } from "./watch.ts";
export type {
  CreateOptions,
  DecodingOptions,
  DeleteCollectionOptions,
  DeleteOptions,
  DeleteResult,
  FieldValidation,
  PatchOptions,
  PatchRequest,
  PatchType,
  ReviewOptions,
  UpdateOptions,
  UpsertResult,
  WriteOptions,
  WriteResult,
} from "./write_options.ts";

export class ResourceRegistry {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly apiVersion: string;
  /** Encodings of stored values (JSON text, protobuf bytes) made by the read paths, kept as
   * long as the stored value lives: a value never changes, so neither do its encodings. */
  readonly encoded: EncodedCache;
  readonly #core: RegistryCore;

  constructor(def: ResourceDefinition, deps: RegistryDeps) {
    const core = new RegistryCore(def, deps);
    this.#core = core;
    this.def = core.def;
    this.gr = core.gr;
    this.apiVersion = core.apiVersion;
    this.encoded = core.encoded;
  }

  /** The store key of one object. Names are validated before they get here. */
  key(namespace: string, name: string): string {
    return this.#core.key(namespace, name);
  }

  /** The store prefix of a list: one namespace, or all objects of the resource. */
  listPrefix(namespace: string): string {
    return this.#core.listPrefix(namespace);
  }

  // ---- reads ----

  /** The object as stored now. 404 NotFound when missing. */
  async get(
    namespace: string,
    name: string,
    opts: ReadOptions = {},
  ): Promise<KubeObject> {
    return this.#core.decode(await this.getStored(namespace, name, opts));
  }

  /** The stored value of the object (for encodings cached per value, see `encoded`). 404
   * NotFound when missing. */
  async getStored(
    namespace: string,
    name: string,
    opts: ReadOptions = {},
  ): Promise<KeyValue> {
    const core = this.#core;
    const kv = await core.read(() => core.store.get(core.key(namespace, name), opts));
    if (!kv) throw notFound(this.gr, name);
    await core.load([kv]);
    return kv;
  }

  /**
   * A consistent list: every page of a chunked list reads at the revision of the first page.
   * `remainingItemCount` is given only without a filter. A continue token whose revision is no
   * longer retained is 410 Expired, with a token that continues at the newest revision.
   */
  list(namespace: string, opts: ListOptions = {}): Promise<ListResult> {
    return listObjects(this.#core, namespace, opts);
  }

  /**
   * The object as JSON text with a final newline (what a plain GET answers), from the JSON
   * text cached per stored value ({@link jsonOf}): it stays right until the object changes.
   */
  getJson(namespace: string, name: string, opts?: ReadOptions): Promise<string> {
    return this.#core.getJson(namespace, name, opts);
  }

  /** The JSON text of a stored value's object, made once per stored value and shared by GETs,
   * lists and watches. */
  jsonOf(kv: KeyValue): string {
    return this.#core.jsonOf(kv);
  }

  /** Stored value -> the object in this definition's version, with its resourceVersion. */
  decode(kv: KeyValue): KubeObject {
    return this.#core.decode(kv);
  }

  /**
   * Changes after `afterRevision` as watch events. With a filter, an object that starts
   * matching arrives as ADDED and one that stops matching as DELETED. Throws `Compacted` /
   * `FutureRevision` store errors at once; `progress()` tells up to which revision every event
   * has been delivered (what a bookmark may say). Event objects are shared between watchers:
   * read them, never change them.
   */
  watch(namespace: string, opts: WatchOptions): RegistryWatch {
    return watchObjects(this.#core, namespace, opts);
  }

  /** The store's newest revision. */
  currentRevision(): number {
    return this.#core.store.currentRevision();
  }

  /** The oldest revision the store still serves reads and watches at. */
  oldestRevision(): number {
    return this.#core.store.oldestRevision();
  }

  /** The structural view of this resource's schema (for patches and managed fields). */
  fieldType(): FieldType {
    return this.#core.fieldType();
  }

  // ---- writes ----

  /** Creates `body` in `namespace`. 409 AlreadyExists, 422 Invalid, 404/403 for a missing or
   * terminating namespace. Returns the stored object (or what would be stored, on dry run).
   * Takes ownership of `body`: it becomes the returned object. */
  create(
    namespace: string,
    body: KubeObject,
    ctx: StrategyContext,
    opts: CreateOptions = {},
  ): Promise<WriteResult> {
    return createObject(this.#core, namespace, body, ctx, opts);
  }

  /**
   * Replaces the object (or, with `subresource`, only the part that subresource owns).
   * A body `metadata.resourceVersion` makes it conditional (409 when stale); without one the
   * update retries on concurrent writes. PUT of a missing object creates it (main resource
   * only). An update that changes nothing writes nothing and returns the stored object.
   * Takes ownership of `body`.
   */
  update(
    namespace: string,
    name: string,
    body: KubeObject,
    ctx: StrategyContext,
    opts: UpdateOptions = {},
  ): Promise<UpsertResult> {
    return updateObject(this.#core, namespace, name, body, ctx, opts);
  }

  /**
   * Patches the stored object (JSON Patch, merge patch, strategic merge patch) or applies a
   * configuration (server-side apply), then writes the result like an update. A
   * `metadata.resourceVersion` in the patch makes it conditional. A missing object is 404,
   * except for apply, which creates it. `patch.body` is the decoded request body.
   */
  patch(
    namespace: string,
    name: string,
    patch: PatchRequest,
    ctx: StrategyContext,
    opts: PatchOptions = {},
  ): Promise<UpsertResult> {
    return patchObject(this.#core, namespace, name, patch, ctx, opts);
  }

  /** The object's autoscaling/v1 Scale (the `scale` subresource, see scale.ts). */
  getScale(namespace: string, name: string): Promise<KubeObject> {
    return getScale(this.#core, namespace, name);
  }

  /** A PUT or patch of the `scale` subresource: the Scale's replicas written to the object;
   * returns the written object's Scale (see scale.ts). */
  updateScale(
    namespace: string,
    name: string,
    change: ScaleChange,
    ctx: StrategyContext,
    opts: UpdateOptions = {},
  ): Promise<WriteResult> {
    return updateScale(this.#core, namespace, name, change, ctx, opts);
  }

  /**
   * Deletes one object. Preconditions (uid, resourceVersion) give 409 when they do not match.
   * With finalizers the object is only marked (deletionTimestamp) and stays until they are
   * removed; the result says which happened.
   */
  delete(namespace: string, name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    return deleteObject(this.#core, namespace, name, opts);
  }

  /**
   * The unsafe delete of a corrupt object (unsafe_delete.ts): removes it from the store unread,
   * skipping finalizers, preconditions and admission; 422 when the object reads fine. A dry run
   * only checks. Resolves with the deletion's revision.
   */
  deleteCorrupt(namespace: string, name: string, dryRun = false): Promise<number> {
    return deleteCorruptObject(this.#core, namespace, name, dryRun);
  }

  /** Deletes every object the filter selects; returns them (as deleted or as marked). */
  deleteCollection(
    namespace: string,
    opts: DeleteCollectionOptions = {},
  ): Promise<Pick<ListResult, "items" | "resourceVersion">> {
    return deleteCollection(this.#core, namespace, opts);
  }

  /**
   * A create on a computed resource ({@link ResourceDefinition.review}): the body is checked
   * as a create's (kind, types, unknown fields, the strategy's validation), then the
   * definition computes the answer; nothing is stored.
   */
  review(body: KubeObject, ctx: ReviewContext, opts: ReviewOptions = {}): Promise<WriteResult> {
    return reviewObject(this.#core, body, ctx, opts);
  }
}
