/**
 * Schema presentation: how a schema's `x-kubernetes-group-version-kind` list shows in one
 * document — trimmed to the document's group-versions, completed with the GVKs of the kinds it
 * serves, and spelled with Kubernetes' group names where the document uses them.
 */

import type { SchemaNode } from "../../schema/mod.ts";
import { kubeGroup } from "../../api/mod.ts";
import { type GVK, GVK_KEY, gvString } from "./names.ts";

/**
 * The schema as a document shows it: GVK lists that name several group-versions (shared types
 * such as DeleteOptions, Status, WatchEvent) keep only the group-versions in `keepGVs`, and
 * `ensure` adds the GVK of a served kind if the data lacks it.
 */
export function presentSchema(node: SchemaNode, keepGVs: Set<string>, ensure: GVK[]): SchemaNode {
  let list = node[GVK_KEY];
  if (!list && ensure.length === 0) return node;
  list = [...(list ?? [])];
  for (const g of ensure) {
    if (!list.some((x) => x.group === g.group && x.version === g.version && x.kind === g.kind)) {
      list.push(g);
    }
  }
  // A document of a group under Kubernetes' name shows the GVKs of the data (written in the
  // canonical spelling) in that name.
  for (const g of [...list]) {
    const kube = { ...g, group: kubeGroup(g.group) };
    if (kube.group === g.group || !keepGVs.has(gvString(kube.group, kube.version))) continue;
    if (!list.some((x) => x.group === kube.group && x.version === g.version && x.kind === g.kind)) {
      list.push(kube);
    }
  }
  // After the served GVKs are in: a kind served under Kubernetes' group name lists only
  // that spelling in its group-version's document.
  if (list.length > 1) list = list.filter((g) => keepGVs.has(gvString(g.group, g.version)));
  return { ...node, [GVK_KEY]: list };
}
