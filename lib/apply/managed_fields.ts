/**
 * `metadata.managedFields`: reading the entries of a stored object into field sets per
 * manager, and writing them back in Kubernetes' form and order.
 *
 * An entry is identified by its manager, operation and subresource, plus its apiVersion for
 * Update entries (an applier keeps one entry whatever version it applies at). At most
 * {@link MAX_UPDATE_ENTRIES} Update entries are kept; older ones fold into
 * `ancient-changes`.
 */

import { FieldSet } from "./fieldset.ts";

export type Operation = "Apply" | "Update";

/** One manager's fields. */
export interface ManagerEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource: string;
  /** RFC 3339, or undefined when never set. */
  time?: string;
  fields: FieldSet;
}

/** Kubernetes' cap on Update entries. */
export const MAX_UPDATE_ENTRIES = 10;
export const ANCIENT_CHANGES = "ancient-changes";

/** The identity of an entry: what makes two writes share one. */
export function entryId(
  e: Pick<ManagerEntry, "manager" | "operation" | "apiVersion" | "subresource">,
): string {
  const version = e.operation === "Apply" ? "" : e.apiVersion;
  return JSON.stringify([e.manager, e.operation, version, e.subresource]);
}

/** The entries of `managedFields` as stored, or undefined when a value is malformed. */
export function decodeManagedFields(raw: unknown): ManagerEntry[] | undefined {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return undefined;
  const out: ManagerEntry[] = [];
  for (const e of raw) {
    if (!e || typeof e !== "object" || Array.isArray(e)) return undefined;
    const r = e as Record<string, unknown>;
    const str = (v: unknown) => v === undefined || typeof v === "string";
    if (!str(r.manager) || !str(r.apiVersion) || !str(r.subresource) || !str(r.time)) {
      return undefined;
    }
    if (r.operation !== undefined && r.operation !== "Apply" && r.operation !== "Update") {
      if (r.operation !== "") return undefined;
    }
    let fields: FieldSet;
    try {
      fields = r.fieldsV1 === undefined || r.fieldsV1 === null
        ? new FieldSet()
        : FieldSet.fromFieldsV1(r.fieldsV1);
    } catch {
      return undefined;
    }
    out.push({
      manager: (r.manager as string | undefined) ?? "",
      operation: (r.operation as Operation | undefined) || "Update",
      apiVersion: (r.apiVersion as string | undefined) ?? "",
      subresource: (r.subresource as string | undefined) ?? "",
      time: r.time as string | undefined,
      fields,
    });
  }
  return out;
}

/** The `managedFields` value for `entries`: empty sets dropped, Update entries capped, sorted
 * as Kubernetes sorts them (Apply first, then by time, manager, apiVersion, subresource).
 * Undefined when nothing is left. */
export function encodeManagedFields(entries: ManagerEntry[]): unknown[] | undefined {
  const kept = capUpdates(entries.filter((e) => !e.fields.isEmpty()));
  if (!kept.length) return undefined;
  kept.sort(compareEntries);
  return kept.map((e) => {
    const out: Record<string, unknown> = {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
    };
    if (e.time) out.time = e.time;
    out.fieldsType = "FieldsV1";
    out.fieldsV1 = e.fields.toFieldsV1();
    if (e.subresource) out.subresource = e.subresource;
    return out;
  });
}

function compareEntries(a: ManagerEntry, b: ManagerEntry): number {
  if (a.operation !== b.operation) return a.operation < b.operation ? -1 : 1;
  const ta = seconds(a.time);
  const tb = seconds(b.time);
  if (ta !== tb) return ta - tb;
  for (const k of ["manager", "apiVersion", "subresource"] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return 0;
}

function seconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** Folds the oldest Update entries beyond the cap into one `ancient-changes` entry per
 * apiVersion. */
function capUpdates(entries: ManagerEntry[]): ManagerEntry[] {
  const updates = entries.filter((e) => e.operation === "Update");
  if (updates.length <= MAX_UPDATE_ENTRIES) return entries;
  const byAge = [...updates].sort((a, b) => seconds(a.time) - seconds(b.time));
  const fold = new Set(byAge.slice(0, updates.length - MAX_UPDATE_ENTRIES + 1));
  const out = entries.filter((e) => !fold.has(e) || e.manager === ANCIENT_CHANGES);
  for (const e of fold) {
    if (e.manager === ANCIENT_CHANGES) continue;
    let ancient = out.find((a) =>
      a.manager === ANCIENT_CHANGES && a.apiVersion === e.apiVersion && a.operation === "Update"
    );
    if (!ancient) {
      ancient = {
        manager: ANCIENT_CHANGES,
        operation: "Update",
        apiVersion: e.apiVersion,
        subresource: "",
        time: e.time,
        fields: new FieldSet(),
      };
      out.push(ancient);
    }
    ancient.fields = ancient.fields.union(e.fields);
  }
  return out;
}
