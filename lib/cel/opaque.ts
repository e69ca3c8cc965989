/**
 * Opaque library values (Quantity, URL, the authorizer chain) at run time. @bufbuild/cel's
 * values are a closed set, so each one travels as a one-entry CelMap that the engine passes
 * around untouched; a side table maps that map back to the JS value. The entry holds an
 * equality key, so `==` between two such values compares what they stand for.
 */

import { type CelMap, celMap, type CelValue } from "@bufbuild/cel";

export interface OpaqueKind<T> {
  /** The CEL type name, e.g. "kubernetes.Quantity". */
  readonly name: string;
  /** Values with the same key are equal in CEL. */
  key(value: T): string;
}

const carried = new WeakMap<object, { kind: string; value: unknown }>();

export function wrapOpaque<T>(kind: OpaqueKind<T>, value: T): CelMap {
  const carrier = celMap(new Map([[`@${kind.name}`, kind.key(value)]]));
  carried.set(carrier, { kind: kind.name, value });
  return carrier;
}

/** The type name of an opaque value, or undefined for an ordinary CEL value. */
export function opaqueTypeName(v: CelValue | undefined): string | undefined {
  return typeof v === "object" && v !== null ? carried.get(v)?.kind : undefined;
}

/** The JS value behind an opaque CEL value of the given kind; throws for anything else. */
export function unwrapOpaque<T>(kind: OpaqueKind<T>, v: CelValue): T {
  const entry = typeof v === "object" && v !== null ? carried.get(v) : undefined;
  if (entry?.kind !== kind.name) throw new Error(`expected a ${kind.name}`);
  return entry.value as T;
}

/** An equality key for values that are only equal to themselves. */
export function identityKey(value: object): string {
  let id = identities.get(value);
  if (id === undefined) identities.set(value, id = String(++lastIdentity));
  return id;
}
const identities = new WeakMap<object, string>();
let lastIdentity = 0;
