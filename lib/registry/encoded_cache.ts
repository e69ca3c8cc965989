/**
 * Per stored value, its encodings: a stored value (a `KeyValue`) is immutable, so the JSON
 * text or protobuf bytes made from it once stay right for as long as it exists. GETs and lists
 * build their bodies from these instead of decoding and re-encoding every object on every
 * request. Entries live exactly as long as the stored value (weak keys): no size bound needed
 * beyond what the store itself retains.
 */

import type { KeyValue } from "../storage/mod.ts";

export class EncodedCache {
  readonly #slots = new Map<string, WeakMap<KeyValue, unknown>>();

  /** The encoding named `slot` of `kv`, made by `make` the first time it is asked for. */
  get<T>(slot: string, kv: KeyValue, make: () => T): T {
    let map = this.#slots.get(slot);
    if (!map) this.#slots.set(slot, map = new WeakMap());
    let value = map.get(kv) as T | undefined;
    if (value === undefined) {
      value = make();
      map.set(kv, value);
    }
    return value;
  }

  /** The encodings named `slot`, by stored value: for a hot path that looks one up directly. */
  slot<T>(slot: string): WeakMap<KeyValue, T> {
    let map = this.#slots.get(slot);
    if (!map) this.#slots.set(slot, map = new WeakMap());
    return map as WeakMap<KeyValue, T>;
  }
}
