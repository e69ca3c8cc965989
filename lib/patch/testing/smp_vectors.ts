/**
 * The kubectl-checked strategic merge patch vectors (`testdata/smp-vectors.json`), for the
 * library test (`lib/patch/strategic_test.ts`) and the HTTP test (`tests/smp_http_test.ts`).
 */

// deno-lint-ignore no-explicit-any
export type Json = Record<string, any>;

export interface Vector {
  id: string;
  /** `deploy`, `cm` or `ns`: the key of the base object in {@link corpus}. */
  base: string;
  patch: Json;
  /** Sub-path (`/a/b`) -> value after the patch; `null` means the key is absent. */
  expect?: Record<string, unknown>;
  /** Kubernetes' error text. */
  expectError?: string;
}

export const corpus: { bases: Record<string, Json>; vectors: Vector[] } = JSON.parse(
  Deno.readTextFileSync(new URL("../../../testdata/smp-vectors.json", import.meta.url)),
);

/** The value at a JSON-Pointer-like path, undefined when absent. */
export function at(doc: unknown, path: string): unknown {
  let cur = doc;
  for (const part of path.split("/").slice(1)) {
    if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Json)[part];
  }
  return cur;
}
