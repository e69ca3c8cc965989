/**
 * The Table form (`Accept: application/json;as=Table;g=meta.platform.io;v=v1`): what
 * `kubectl get` prints. Columns are Name, then the resource's printer columns.
 */

import type { KubeObject, ResourceDefinition } from "../registry/definition.ts";
import { AGE } from "../registry/builtin/columns.ts";

export type IncludeObject = "None" | "Metadata" | "Object";

export function parseIncludeObject(v: string | null): IncludeObject {
  return v === "None" || v === "Object" ? v : "Metadata";
}

export function toTable(
  def: ResourceDefinition,
  items: KubeObject[],
  opts: { apiVersion: string; listMeta: Record<string, unknown>; include: IncludeObject },
): KubeObject {
  const columns = def.printerColumns ?? [AGE];
  const columnDefinitions = [
    {
      name: "Name",
      type: "string",
      format: "name",
      description:
        "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.",
      priority: 0,
    },
    ...columns.map((c) => ({
      name: c.name,
      type: c.type === "date" ? "string" : c.type,
      format: "",
      description: c.description ?? "",
      priority: c.priority ?? 0,
    })),
  ];
  const [group] = opts.apiVersion.split("/");
  const rows = items.map((obj) => {
    const row: KubeObject = {
      cells: [obj.metadata?.name ?? "", ...columns.map((c) => cell(c.value(obj)))],
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
