/**
 * What the OpenAPI v3 and Swagger 2.0 renderers share: operations grouped by path (the
 * parameters every operation of a path shares move to the path, as Kubernetes' generator
 * does), the schemas a set of operations references, and the `info` and security scheme every
 * document carries.
 */

import type { Operation } from "./model.ts";
import type { Param } from "./parameters.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;

/** The `info` of every document. */
export const INFO = { title: "Platform", version: "unversioned" };

export const SECURITY_SCHEME = {
  BearerToken: {
    description: "Bearer Token authentication",
    in: "header",
    name: "authorization",
    type: "apiKey",
  },
};

function paramKey(p: Param): string {
  return `${p.in}:${p.name}`;
}

function sortParams(params: Param[]): Param[] {
  const unique = new Map<string, Param>();
  for (const p of params) unique.set(paramKey(p), p);
  return [...unique.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.in < b.in ? -1 : 1
  );
}

/** Groups operations by path; the parameters every operation of a path shares move to the
 * path (as Kubernetes' generator does). */
export function byPath(ops: Operation[]): Map<string, { shared: Param[]; ops: Operation[] }> {
  const groups = new Map<string, Operation[]>();
  for (const o of ops) {
    const list = groups.get(o.path);
    if (list) list.push(o);
    else groups.set(o.path, [o]);
  }
  const out = new Map<string, { shared: Param[]; ops: Operation[] }>();
  for (const path of [...groups.keys()].sort()) {
    const list = groups.get(path)!;
    let shared = new Set(list[0].params.map(paramKey));
    for (const o of list.slice(1)) {
      const keys = new Set(o.params.map(paramKey));
      shared = new Set([...shared].filter((k) => keys.has(k)));
    }
    const sharedParams = sortParams(list[0].params.filter((p) => shared.has(paramKey(p))));
    out.set(path, {
      shared: sharedParams,
      ops: list
        .map((o) => ({
          ...o,
          params: sortParams(o.params.filter((p) => !shared.has(paramKey(p)))),
        }))
        .sort((a, b) => (a.method < b.method ? -1 : 1)),
    });
  }
  return out;
}

/** The schemas the operations' bodies and responses name (without what those refer to). */
export function referencedSchemas(ops: Operation[]): string[] {
  const names = new Set<string>();
  for (const o of ops) {
    if (o.body) names.add(o.body.schema);
    for (const r of Object.values(o.responses)) if (r.schema) names.add(r.schema);
  }
  return [...names];
}
