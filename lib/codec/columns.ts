/** Printer columns shared by several built-in resources. */

import { humanDuration, type KubeObject, type PrinterColumn } from "../api/mod.ts";

/** Age from creationTimestamp, rendered as kube does (`5m`, `3d`). */
export function ageColumn(now: () => Date = () => new Date()): PrinterColumn {
  return {
    name: "Age",
    type: "string",
    description:
      "CreationTimestamp is a timestamp representing the server time when this object was created.",
    value: (obj: KubeObject) => {
      const ts = obj?.metadata?.creationTimestamp;
      if (typeof ts !== "string") return "<unknown>";
      const t = Date.parse(ts);
      return Number.isNaN(t) ? "<unknown>" : humanDuration(now().getTime() - t);
    },
  };
}

export const AGE = ageColumn();

/** kube's default column besides Name, for kinds without printers of their own. */
export const CREATED_AT: PrinterColumn = {
  name: "Created At",
  type: "date",
  description:
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
  value: (obj: KubeObject) => obj?.metadata?.creationTimestamp ?? "<unknown>",
};

/** The Name column, for resources that place it themselves (kube's events put it last). */
export const NAME: PrinterColumn = {
  name: "Name",
  type: "string",
  format: "name",
  description:
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.",
  value: (obj: KubeObject) => obj?.metadata?.name ?? "",
};

/** Number of keys of an object-valued field (for DATA columns). */
export function keyCount(...maps: unknown[]): number {
  let n = 0;
  for (const m of maps) if (m && typeof m === "object") n += Object.keys(m).length;
  return n;
}
