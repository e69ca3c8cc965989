/**
 * Which documents `/openapi/v3/` serves for a set of definitions and what each holds: one per
 * group-version (`api/v1`, `apis/<group>/<version>`) with the resource list and the operations
 * of its definitions, then the discovery documents `api`, `apis`, `apis/<group>`, `version`.
 */

import { apiVersionOf, listKindOf, type ResourceDefinition } from "../../registry/mod.ts";
import { documentPath, type GVK, listSchemaName } from "./names.ts";
import type { DocSpec, Operation } from "./model.ts";
import { operationsFor } from "./operations.ts";
import { discoveryOperations, resourceListOperation } from "./discovery.ts";

/** The spec of every document, by document path, in the order the v2 document merges them. */
export function documentSpecs(defs: ResourceDefinition[]): Map<string, DocSpec> {
  const specs = new Map<string, DocSpec>();
  const groups = new Map<string, Set<string>>();
  for (const def of defs) {
    const path = documentPath(def.group, def.version);
    let spec = specs.get(path);
    if (!spec) {
      spec = {
        ops: [resourceListOperation(def.group, def.version)],
        keepGVs: new Set(["v1", apiVersionOf(def)]),
        ensure: new Map(),
      };
      specs.set(path, spec);
    }
    spec.ops.push(...operationsFor(def));
    const add = (name: string, gvk: GVK) =>
      spec.ensure.set(name, [...(spec.ensure.get(name) ?? []), gvk]);
    add(def.schema, { group: def.group, kind: def.kind, version: def.version });
    add(listSchemaName(def.schema), {
      group: def.group,
      kind: listKindOf(def),
      version: def.version,
    });
    if (def.group) {
      const versions = groups.get(def.group) ?? new Set<string>();
      versions.add(def.version);
      groups.set(def.group, versions);
    }
  }
  const small = (op: Operation): DocSpec => ({
    ops: [op],
    keepGVs: new Set(["v1"]),
    ensure: new Map(),
  });
  for (const [path, op] of discoveryOperations(groups.keys())) specs.set(path, small(op));
  return specs;
}
