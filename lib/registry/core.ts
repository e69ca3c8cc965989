/**
 * What all the verbs of one resource registry share: its definition, its store, and the
 * boundary between them: where an object is kept (its key), how a stored value becomes an
 * object and back, the encodings kept per stored value (the one cache of JSON texts among
 * them), and how storage errors become API errors. The verbs (list.ts, watch.ts, create.ts,
 * update.ts, delete.ts, review.ts) are functions over a {@link RegistryCore}; the
 * `ResourceRegistry` in generic.ts is what callers hold.
 */

import {
  alreadyExists,
  type Clock,
  conflict,
  type GroupResource,
  internalError,
  notFound,
  OBJECT_MODIFIED,
  StatusError,
  systemClock,
} from "../api/mod.ts";
import { type AdmissionChain, NO_ADMISSION } from "../admission/mod.ts";
import {
  isStoreError,
  type KeyValue,
  type ReadOptions,
  type Store,
  unreadableReason,
} from "../storage/mod.ts";
import {
  apiVersionOf,
  type BatchStorageConversion,
  isBatchConversion,
  type KubeObject,
  type ResourceDefinition,
  type StorageConversion,
} from "./definition.ts";
import { type FieldType, type SchemaSet, typeOf } from "../schema/mod.ts";
import { EncodedCache } from "./encoded_cache.ts";
import { randomContinueKey } from "./continue.ts";
import { nameMatcher, type ObjectFilter } from "./filter.ts";

export interface RegistryDeps {
  store: Store;
  schemas: SchemaSet;
  clock?: Clock;
  /** The admission chain every write of the resource passes. @default none: all admitted */
  admission?: AdmissionChain;
  /** MAC key of continue tokens; give the same key to a store that outlives the process so
   * that tokens survive restarts. Default: random. */
  continueKey?: Uint8Array;
  /** The AllowUnsafeMalformedObjectDeletion gate: a stored value the server cannot read is
   * reported as kube reports a corrupt object (see {@link unreadableError}). @default false */
  corruptObjectErrors?: boolean;
}

/** Store key prefix of a stored resource: `/registry/<group|core>/<resource>/`. */
export function resourcePrefix(group: string, resource: string): string {
  return `/registry/${group || "core"}/${resource}/`;
}

/** Concurrent writes an unconditional update or a delete rides out before it gives up (409). */
export const MAX_UPDATE_RETRIES = 16;

/** The {@link EncodedCache} slot of an object's JSON text as `JSON.stringify` gives it, and a
 * newline (a GET's body). */
const JSON_LINE_SLOT = "json-line";

export class RegistryCore {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly apiVersion: string;
  readonly store: Store;
  readonly schemas: SchemaSet;
  readonly clock: Clock;
  readonly admission: AdmissionChain;
  readonly continueKey: Uint8Array;
  readonly corruptObjectErrors: boolean;
  /** Encodings of stored values (JSON text, protobuf bytes) made by the read paths, kept as
   * long as the stored value lives: a value never changes, so neither do its encodings. */
  readonly encoded = new EncodedCache();
  /** The JSON text slot of {@link encoded}, held directly: every plain GET reads it. */
  readonly #json: WeakMap<KeyValue, string>;
  /** Decoded stored values shared by all watchers (each event is decoded once). */
  readonly #shared = new WeakMap<KeyValue, KubeObject>();
  readonly #prefix: string;
  readonly #conversion?: StorageConversion;
  readonly #batch?: BatchStorageConversion;
  /** With a batch conversion: the stored values converted to this version, as JSON text. */
  readonly #converted = new WeakMap<KeyValue, string>();
  #fieldType?: FieldType;

  constructor(def: ResourceDefinition, deps: RegistryDeps) {
    this.def = def;
    this.gr = { group: def.group, resource: def.plural };
    this.apiVersion = apiVersionOf(def);
    this.store = deps.store;
    this.schemas = deps.schemas;
    this.clock = deps.clock ?? systemClock;
    this.admission = deps.admission ?? NO_ADMISSION;
    this.continueKey = deps.continueKey ?? randomContinueKey();
    this.corruptObjectErrors = deps.corruptObjectErrors ?? false;
    this.#prefix = def.storage
      ? resourcePrefix(def.storage.group, def.storage.resource)
      : resourcePrefix(def.group, def.plural);
    this.#json = this.encoded.slot<string>(JSON_LINE_SLOT);
    const conversion = def.storage?.conversion;
    if (conversion && isBatchConversion(conversion)) this.#batch = conversion;
    else this.#conversion = conversion;
  }

  /**
   * Makes stored values decodable: with a conversion that calls out (a batch conversion),
   * converts those not converted yet, all in one call; otherwise nothing to do. Every read
   * path calls this before it decodes what the store gave it. Throws the conversion's
   * StatusErrors (nothing is cached then).
   */
  load(kvs: readonly (KeyValue | undefined)[]): Promise<void> | undefined {
    if (!this.#batch) return undefined;
    const todo = kvs.filter((kv): kv is KeyValue => kv !== undefined && !this.#converted.has(kv));
    if (!todo.length) return undefined;
    return this.#convertAll(todo, this.#batch);
  }

  /** Whether {@link decode} can decode `kv` now (see {@link load}). */
  loaded(kv: KeyValue): boolean {
    return !this.#batch || this.#converted.has(kv);
  }

  async #convertAll(kvs: KeyValue[], batch: BatchStorageConversion): Promise<void> {
    const objs: KubeObject[] = [];
    const at: KeyValue[] = [];
    for (const kv of kvs) {
      const unreadable = unreadableReason(kv.value);
      if (unreadable !== undefined) throw this.unreadableError(kv.key, unreadable);
      const obj = JSON.parse(kv.value) as KubeObject;
      // Stored in this version already: nothing to convert.
      if (obj.apiVersion === this.apiVersion) this.#converted.set(kv, kv.value);
      else {
        objs.push(obj);
        at.push(kv);
      }
    }
    if (!objs.length) return;
    const out = await batch.fromStorageAll(objs);
    at.forEach((kv, i) => this.#converted.set(kv, JSON.stringify(out[i])));
  }

  /** The store key of one object. Names are validated before they get here. */
  key(namespace: string, name: string): string {
    return this.def.namespaced ? `${this.#prefix}${namespace}/${name}` : `${this.#prefix}${name}`;
  }

  /**
   * Which of this resource's keys a filter's name and namespace requirements pass (see
   * {@link nameMatcher}), decided from the key alone; undefined when the filter has none.
   */
  keyFilter(filter: ObjectFilter | undefined): ((key: string) => boolean) | undefined {
    const matches = nameMatcher(filter);
    if (!matches) return undefined;
    const prefix = this.#prefix;
    if (!this.def.namespaced) return (key) => matches("", key.slice(prefix.length));
    return (key) => {
      const slash = key.indexOf("/", prefix.length);
      return matches(key.slice(prefix.length, slash), key.slice(slash + 1));
    };
  }

  /** The store prefix of a list: one namespace, or all objects of the resource. */
  listPrefix(namespace: string): string {
    return this.def.namespaced && namespace ? `${this.#prefix}${namespace}/` : this.#prefix;
  }

  /** The structural view of this resource's schema (for patches and managed fields). */
  fieldType(): FieldType {
    return this.#fieldType ??= typeOf(this.schemas, this.def.schema);
  }

  /** Stored value -> the object in this definition's version, with its resourceVersion. */
  decode(kv: KeyValue): KubeObject {
    const unreadable = unreadableReason(kv.value);
    if (unreadable !== undefined) throw this.unreadableError(kv.key, unreadable);
    let obj: KubeObject;
    if (this.#batch) {
      const text = this.#converted.get(kv);
      if (text === undefined) throw internalError(`object ${kv.key} was read before conversion`);
      obj = JSON.parse(text);
    } else {
      obj = JSON.parse(kv.value) as KubeObject;
      if (this.#conversion) obj = this.#conversion.fromStorage(obj);
    }
    this.def.strategy?.applyDefaults?.(obj);
    obj.metadata ??= {};
    obj.metadata.resourceVersion = String(kv.modRevision);
    return obj;
  }

  /**
   * The 500 a read of an unreadable stored value answers: the platform's message, or with
   * {@link corruptObjectErrors} kube's corrupt-object storage error (code 7, "corrupt object"),
   * which tells the operator the object can be removed with an unsafe delete.
   */
  unreadableError(key: string, reason: string): StatusError {
    if (!this.corruptObjectErrors) {
      return internalError(`unable to transform key ${JSON.stringify(key)}: ${reason}`);
    }
    return internalError(
      `StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: 0, ` +
        `AdditionalErrorMsg: data from the storage is not transformable revision=0: ${reason}`,
    );
  }

  /** Object -> the value to store (in the stored form, without resourceVersion). With a
   * batch conversion the object is converted first (a call out), hence a promise. */
  encode(obj: KubeObject): string | Promise<string> {
    if (this.#batch) return this.#batch.toStorageAsync(obj).then((o) => storedText(o));
    return storedText(this.#conversion ? this.#conversion.toStorage(obj) : obj);
  }

  /** The object of a stored value as JSON text (what lists and watches embed), from the text
   * cached per stored value that GETs answer with. */
  jsonOf(kv: KeyValue): string {
    // A slice of the cached text: no copy.
    return this.#jsonLine(kv).slice(0, -1);
  }

  /** The object of a stored value as JSON text and a newline (a GET's body), made once per
   * stored value: GETs, lists and watches share it. */
  #jsonLine(kv: KeyValue): string {
    let text = this.#json.get(kv);
    if (text === undefined) {
      text = JSON.stringify(this.decode(kv)) + "\n";
      this.#json.set(kv, text);
    }
    return text;
  }

  /** The decoded object of a stored value, made once and shared by every watcher: read it,
   * never change it. */
  sharedObject(kv: KeyValue): KubeObject {
    let obj = this.#shared.get(kv);
    if (!obj) this.#shared.set(kv, obj = this.decode(kv));
    return obj;
  }

  /** The object as JSON text with a final newline (what a plain GET answers), from the JSON
   * text cached per stored value. 404 NotFound when missing. */
  getJson(namespace: string, name: string, opts?: ReadOptions): Promise<string> {
    // One promise step (every GET comes here): no async frames around the store's read.
    return this.store.get(this.key(namespace, name), opts).then(
      (kv) => {
        if (!kv) throw notFound(this.gr, name);
        const loading = this.load([kv]);
        return loading ? loading.then(() => this.#jsonLine(kv)) : this.#jsonLine(kv);
      },
      (err) => Promise.reject(this.translate(err, "")),
    );
  }

  /** The stored value at `key` (undefined when missing), loaded for {@link decode}; errors
   * translated. What writes read before they change an object. */
  async readStored(key: string): Promise<KeyValue | undefined> {
    const kv = await this.read(() => this.store.get(key));
    await this.load([kv]);
    return kv;
  }

  /** A store read, its errors translated. */
  async read<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.translate(err, "");
    }
  }

  /** Storage errors -> API errors. */
  translate(err: unknown, name: string): unknown {
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
}

/** An object as the JSON text stored, without its resourceVersion. */
function storedText(stored: KubeObject): string {
  const meta = stored.metadata;
  if (meta?.resourceVersion === undefined) return JSON.stringify(stored);
  if (Object.isFrozen(meta)) {
    const { resourceVersion: _, ...metadata } = meta;
    return JSON.stringify({ ...stored, metadata });
  }
  // Left out for the moment (JSON omits undefined): a copy and a delete cost a write 1–2 µs.
  const rv = meta.resourceVersion;
  meta.resourceVersion = undefined;
  try {
    return JSON.stringify(stored);
  } finally {
    meta.resourceVersion = rv;
  }
}
