/**
 * The Table form (`Accept: application/json;as=Table;g=meta.platform.io;v=v1`): what
 * `kubectl get` prints. Columns are Name, then the resource's printer columns (or just those,
 * when they place Name themselves).
 */

import type { KubeObject, PrinterColumn } from "../api/mod.ts";
import { AGE, NAME } from "./columns.ts";

export type IncludeObject = "None" | "Metadata" | "Object";

export function parseIncludeObject(v: string | null): IncludeObject {
  return v === "None" || v === "Object" ? v : "Metadata";
}

export function toTable(
  def: { printerColumns?: PrinterColumn[] },
  items: KubeObject[],
  opts: { apiVersion: string; listMeta: Record<string, unknown>; include: IncludeObject },
): KubeObject {
  // Name comes first unless the resource places it (kube's events put it last).
  const own = def.printerColumns ?? [AGE];
  const columns = own.some((c) => c.format === "name") ? own : [NAME, ...own];
  const columnDefinitions = columns.map((c) => ({
    name: c.name,
    type: c.type,
    format: c.format ?? "",
    description: c.description ?? "",
    priority: c.priority ?? 0,
  }));
  const [group] = opts.apiVersion.split("/");
  const rows = items.map((obj) => {
    const row: KubeObject = {
      cells: columns.map((c) => cell(c.value(obj))),
    };
    if (opts.include === "Object") row.object = obj;
    else if (opts.include === "Metadata") {
      row.object = {
        kind: "PartialObjectMetadata",
        apiVersion: `${group}/v1`,
        metadata: obj.metadata,
      };
    }
    return row;
  });
  return {
    kind: "Table",
    apiVersion: opts.apiVersion,
    metadata: opts.listMeta,
    columnDefinitions,
    rows,
  };
}

function cell(v: unknown): unknown {
  if (v === undefined || v === null) return "<none>";
  return v;
}
