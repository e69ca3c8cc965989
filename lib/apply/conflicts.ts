/**
 * The 409 an apply gets when it would change fields another manager owns, worded as
 * Kubernetes words it: `Apply failed with 1 conflict: conflict with "ctl" using v1: .spec.x`,
 * or, for several, one block per manager (managers sorted) listing `- <path>` lines, with one
 * `FieldManagerConflict` cause per path.
 */

import { StatusError } from "../api/mod.ts";
import { type FieldSet, pathString } from "./fieldset.ts";
import type { ManagerEntry } from "./managed_fields.ts";

export interface Conflict {
  owner: ManagerEntry;
  path: string[];
}

/** Every path of `set` that `owner` owns, as conflicts. */
export function conflictsOf(owner: ManagerEntry, set: FieldSet): Conflict[] {
  return [...set.paths()].map((path) => ({ owner, path }));
}

/** How a conflict names a manager: `"m"`, `"m" with subresource "status"`, `"m" using v1`. */
export function managerLabel(e: ManagerEntry): string {
  let out = JSON.stringify(e.manager);
  if (e.subresource) out += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === "Update") out += ` using ${e.apiVersion}`;
  return out;
}

export function conflictError(conflicts: Conflict[]): StatusError {
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${managerLabel(c.owner)}`,
    field: pathString(c.path),
  }));
  return new StatusError(409, "Conflict", conflictMessage(conflicts), { details: { causes } });
}

function conflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0];
    return `Apply failed with 1 conflict: conflict with ${managerLabel(c.owner)}: ${
      pathString(c.path)
    }`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const label = managerLabel(c.owner);
    const paths = byManager.get(label) ?? [];
    paths.push(pathString(c.path));
    byManager.set(label, paths);
  }
  const lines: string[] = [];
  for (const label of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${label}:`);
    for (const p of byManager.get(label)!) lines.push(`- ${p}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
}
