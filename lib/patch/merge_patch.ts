/**
 * JSON merge patch (RFC 7386, `application/merge-patch+json`): an object patch merges into the
 * target key by key, `null` deletes a key, and anything else (arrays included) replaces the
 * target value. The target is never mutated; what the patch contributes is copied.
 */

import { badRequest, isJsonObject as isObject } from "../api/mod.ts";

/** The deepest nesting a merge patch may have. */
const MAX_DEPTH = 512;

/** Applies `patch` to `target` per RFC 7386; returns the new value. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  return merge(target, patch, 0);
}

function merge(target: unknown, patch: unknown, depth: number): unknown {
  if (!isObject(patch)) return copyOf(patch);
  if (depth > MAX_DEPTH) throw badRequest(`the patch is nested deeper than ${MAX_DEPTH} levels`);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) {
      delete out[key];
    } else {
      // A data property, so `__proto__` is a key like any other.
      Object.defineProperty(out, key, {
        value: merge(Object.hasOwn(out, key) ? out[key] : undefined, value, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out;
}

function copyOf(v: unknown): unknown {
  return v !== null && typeof v === "object" ? structuredClone(v) : v;
}
