/**
 * The value transformer seam: how a value is turned into the bytes the file store keeps on disk
 * (journal records and object files) and back. The store's memory always holds plain values;
 * only what reaches the disk is transformed. Encryption at rest (`lib/encryption/`) implements
 * it; without a transformer values are stored as they are.
 * @module
 */

/** A value read back from disk. */
export interface ReadValue {
  /** The plain value, or {@link unreadableValue} when no configured provider could read it. */
  value: string;
  /** The stored form is not what a write would produce now (another provider or key): an
   * update should rewrite it even when the value did not change. */
  stale: boolean;
  /** Why the value could not be read (then `value` is an unreadable stand-in). */
  error?: string;
}

/** Turns values into their stored form and back, per key. Synchronous: a write's record is
 * encoded in revision order, on the write path. */
export interface ValueTransformer {
  /** The stored form of `value` under `key`. An unreadable stand-in returns the stored form
   * it was read from, unchanged. */
  toStorage(key: string, value: string): string;
  /** The value a stored form holds. Never throws: a value no provider can read comes back as
   * an unreadable stand-in with `error` set. */
  fromStorage(key: string, stored: string): ReadValue;
}

/** Starts every unreadable stand-in; plain values (JSON) never start with NUL. */
const UNREADABLE = "\u0000unreadable\u0000";

/**
 * The in-memory stand-in for a stored value that cannot be read with the configured keys: it
 * carries the reason (for the error readers get) and the stored form (written back unchanged,
 * so that restoring the key in the configuration makes the value readable again).
 */
export function unreadableValue(stored: string, reason: string): string {
  return `${UNREADABLE}${reason.replaceAll("\u0000", "")}\u0000${stored}`;
}

/** The reason a value is an unreadable stand-in, or undefined for an ordinary value. */
export function unreadableReason(value: string): string | undefined {
  if (!value.startsWith(UNREADABLE)) return undefined;
  const end = value.indexOf("\u0000", UNREADABLE.length);
  return value.slice(UNREADABLE.length, end < 0 ? undefined : end);
}

/** The stored form an unreadable stand-in was read from (undefined for ordinary values). */
export function unreadableStored(value: string): string | undefined {
  if (!value.startsWith(UNREADABLE)) return undefined;
  const end = value.indexOf("\u0000", UNREADABLE.length);
  return end < 0 ? "" : value.slice(end + 1);
}

/**
 * The stored forms of values, computed once per value: an update's or delete's record
 * carries the previous value again, and the object file is written later. Without a
 * transformer the stored form is the value.
 */
export class StoredValues {
  readonly #transformer: ValueTransformer | undefined;
  readonly #forms = new WeakMap<object, string>();

  constructor(transformer: ValueTransformer | undefined) {
    this.#transformer = transformer;
  }

  /** Whether values are transformed at all. */
  get transforms(): boolean {
    return this.#transformer !== undefined;
  }

  /** What the disk holds for `kv.value` under `kv.key`. */
  of(kv: { key: string; value: string }): string {
    if (!this.#transformer) return kv.value;
    let stored = this.#forms.get(kv);
    if (stored === undefined) {
      stored = this.#transformer.toStorage(kv.key, kv.value);
      if (stored !== kv.value) this.#forms.set(kv, stored);
    }
    return stored;
  }
}
