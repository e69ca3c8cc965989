/**
 * A JSON value as CEL input that is converted as the expression reads it. An admission object
 * converted whole costs a map per object and a conversion per field (7–8 µs for a small
 * ConfigMap with its managed fields), where the expressions of a policy usually read a few
 * fields of it. Here an object is a CEL map over the JSON object, and each field is converted
 * when first read, once (several expressions read the same value).
 *
 * @bufbuild/cel takes any object that carries its map mark and answers the read-only Map
 * interface as a CEL map; the values it hands out must already be CEL values.
 */

import { celList, type CelMap, type CelValue } from "@bufbuild/cel";
import { isPlainObject, notJsonError, numberToCel, PreparedCelValue } from "./values.ts";

const CEL_MAP = Symbol.for("@bufbuild/cel/map");

/** `value` (JSON: objects, arrays, strings, numbers, booleans, null; integers may be bigint)
 * for CEL, each part converted when read. A part that is not JSON fails the expression that
 * reads it, its path (from `name`) in the error. */
export function lazyJsonInput(value: unknown, name: string): CelValue {
  return jsonToCel(value, name, undefined);
}

/** Where a value is: a name, or its parent's place and its key or index there (the path's text
 * is made only for an error). */
type Place = string | JsonMap | PlaceInList;

interface PlaceInList {
  list: Place;
  index: number;
}

function pathOf(place: Place): string {
  if (typeof place === "string") return place;
  if (place instanceof JsonMap) return place.path;
  return `${pathOf(place.list)}[${place.index}]`;
}

/** `value` read at `key` of the map `parent`, or at `parent` itself (a root, a list's item). */
function jsonToCel(value: unknown, parent: Place, key: string | undefined): CelValue {
  if (typeof value !== "object") {
    if (typeof value === "number") return numberToCel(value);
    if (typeof value === "string" || typeof value === "boolean" || typeof value === "bigint") {
      return value;
    }
  } else if (value === null || value instanceof Uint8Array) {
    return value;
  } else if (value instanceof PreparedCelValue) {
    return value.input as CelValue;
  } else if (Array.isArray(value)) {
    const place = key === undefined ? parent : childPlace(parent, key);
    return celList(value.map((v, i) => jsonToCel(v, { list: place, index: i }, undefined)));
  } else if (isPlainObject(value)) {
    return new JsonMap(value, parent, key) as unknown as CelMap;
  }
  throw notJsonError(value, key === undefined ? pathOf(parent) : pathOf(childPlace(parent, key)));
}

function childPlace(parent: Place, key: string): string {
  return `${pathOf(parent)}.${key}`;
}

/** A JSON object as a CEL map: string keys; a property set to undefined is absent. */
class JsonMap {
  readonly [CEL_MAP] = {};
  readonly #object: Record<string, unknown>;
  readonly #parent: Place;
  readonly #key: string | undefined;
  /** The fields read so far, converted (made at the first read). */
  #read: Map<string, CelValue> | undefined;
  #keys: string[] | undefined;

  constructor(object: Record<string, unknown>, parent: Place, key: string | undefined) {
    this.#object = object;
    this.#parent = parent;
    this.#key = key;
  }

  /** Where this object is, as errors name it (`object.spec.template`). */
  get path(): string {
    return this.#key === undefined
      ? pathOf(this.#parent)
      : pathOf(childPlace(this.#parent, this.#key));
  }

  get size(): number {
    return this.#definedKeys().length;
  }

  get(key: unknown): CelValue | undefined {
    // JSON objects have string keys only: an int or bool key is never present.
    if (typeof key !== "string") return undefined;
    const known = this.#read?.get(key);
    if (known !== undefined) return known;
    if (!Object.hasOwn(this.#object, key)) return undefined;
    const raw = this.#object[key];
    if (raw === undefined) return undefined;
    const value = jsonToCel(raw, this, key);
    (this.#read ??= new Map()).set(key, value);
    return value;
  }

  has(key: unknown): boolean {
    return this.get(key) !== undefined;
  }

  keys(): IterableIterator<string> {
    return this.#definedKeys()[Symbol.iterator]();
  }

  *values(): IterableIterator<CelValue> {
    for (const k of this.#definedKeys()) yield this.get(k)!;
  }

  *entries(): IterableIterator<[string, CelValue]> {
    for (const k of this.#definedKeys()) yield [k, this.get(k)!];
  }

  [Symbol.iterator](): IterableIterator<[string, CelValue]> {
    return this.entries();
  }

  forEach(
    callback: (value: CelValue, key: string, map: JsonMap) => void,
    thisArg?: unknown,
  ): void {
    for (const k of this.#definedKeys()) callback.call(thisArg, this.get(k)!, k, this);
  }

  #definedKeys(): string[] {
    this.#keys ??= Object.keys(this.#object).filter((k) => this.#object[k] !== undefined);
    return this.#keys;
  }
}
