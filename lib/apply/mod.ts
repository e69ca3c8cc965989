/**
 * Server-side apply and field ownership (`metadata.managedFields`), as the API conventions
 * lay them out:
 *
 * - {@link applyConfig}: an apply configuration merged into the live object. The applier
 *   owns exactly what it sends; what it applied before and omits now is removed unless
 *   another manager owns it; a change to a field another manager owns is a 409 conflict
 *   unless forced (then the applier becomes its sole owner).
 * - {@link trackUpdate}: every other write (create, update, non-apply patch) takes
 *   ownership of what it added or changed, and never conflicts.
 *
 * Both work on {@link FieldSet}s computed from the values and the resource's schema
 * ({@link FieldType}); fields the endpoint resets (status on the main resource, everything
 * but status on `/status`) are neither changed nor owned there. Managers recorded at another
 * apiVersion of another shape see the write as the caller converted it to their version
 * (`changesAt`, `prunedElsewhere`; the registry does the conversion calls).
 */

import { badRequest, type FieldError, isJsonObject as isObject } from "../api/mod.ts";
import { type FieldType, UNTYPED } from "../schema/mod.ts";
import { type Conflict, conflictError, conflictsOf } from "./conflicts.ts";
import { FieldSet, pathString } from "./fieldset.ts";
import {
  decodeManagedFields,
  encodeManagedFields,
  entryId,
  type ManagerEntry,
} from "./managed_fields.ts";
import {
  compare,
  duplicateElement,
  fieldsOf,
  fieldType,
  mergeValues,
  reconcileWithSchema,
  removePaths,
  withNamedFieldsAsMembers,
} from "./typed_value.ts";

// deno-lint-ignore no-explicit-any
type KubeObject = Record<string, any>;

/** What field tracking needs to know about a write. */
export interface FieldManagerContext {
  /** The resource's schema. */
  type: FieldType;
  manager: string;
  /** The API version the request was made at (recorded in the entry). */
  apiVersion: string;
  /** `""` for the main resource, else e.g. `status`. */
  subresource: string;
  /** RFC 3339 time of the write. */
  now: string;
  /** Top-level fields this endpoint resets: never changed or owned through it. */
  ignoredFields: string[];
  /** What a create is compared with (the kind's empty object); default `{}`. */
  emptyObject?: KubeObject;
  /**
   * The write's changes as seen at other apiVersions (see {@link changesBetween}): managers
   * recorded at such a version lose, and conflict on, these instead of this version's (kube
   * compares the objects converted to each manager's version). A version not here is taken to
   * have this version's shape (None conversion).
   */
  changesAt?: ReadonlyMap<string, VersionChanges>;
  /**
   * For an applier whose previous entry is at another apiVersion (of another shape): the
   * fields its previous apply leaves unowned, as paths of this version (see
   * {@link pruneAtVersion}); they are pruned instead of the previous entry's own paths, which
   * name that version's fields. Absent: the previous entry's paths are pruned here.
   */
  prunedElsewhere?: FieldSet;
}

/** What a write changed, as field sets: what it added or modified, and what it removed. */
export interface VersionChanges {
  changed: FieldSet;
  removed: FieldSet;
}

/** No changes at each of `versions` (managers there neither conflict nor lose fields). */
export function unchangedAt(versions: readonly string[]): Map<string, VersionChanges> {
  return new Map(versions.map((v) => [v, { changed: new FieldSet(), removed: new FieldSet() }]));
}

/** The apiVersions of `obj`'s managed fields other than `apiVersion`. */
export function otherManagerVersions(obj: KubeObject | undefined, apiVersion: string): string[] {
  const entries = decodeManagedFields(obj?.metadata?.managedFields) ?? [];
  return [...new Set(entries.map((e) => e.apiVersion))].filter((v) => v !== apiVersion);
}

/** The changes from `before` to `after` (the same object at one other apiVersion), as a
 * manager recorded at that version owns fields there. */
export function changesBetween(
  before: KubeObject,
  after: KubeObject,
  ctx: Pick<FieldManagerContext, "type" | "ignoredFields">,
): VersionChanges {
  const c = compare(withoutManagedFields(before), withoutManagedFields(after), ctx.type);
  const owned = { ...ctx, manager: "", apiVersion: "", subresource: "", now: "" };
  return {
    changed: ownable(c.added.merge(c.modified), owned),
    removed: ownable(c.removed, owned),
  };
}

/** The apiVersion of `ctx.manager`'s previous Apply entry on `live`, if it has one. */
export function previousApplyVersion(
  live: KubeObject,
  ctx: FieldManagerContext,
): string | undefined {
  const id = entryId({ ...ctx, operation: "Apply" });
  return storedEntries(live.metadata?.managedFields, ctx.type).find((e) => entryId(e) === id)
    ?.apiVersion;
}

/**
 * kube's prune at the applier's previous version: `mergedThere` (the applied object converted
 * to `version`) without the fields the previous Apply entry (recorded at `version`) owned and
 * no other manager recorded there owns. Read with `ctx.type` (the other version's schema is
 * not at hand).
 */
export function pruneAtVersion(
  mergedThere: KubeObject,
  live: KubeObject,
  ctx: FieldManagerContext,
  version: string,
): KubeObject {
  const entries = storedEntries(live.metadata?.managedFields, ctx.type);
  const id = entryId({ ...ctx, operation: "Apply" });
  const previous = entries.find((e) => entryId(e) === id);
  if (!previous || previous.apiVersion !== version) return mergedThere;
  const others = entries.filter((e) => e !== previous && e.apiVersion === version);
  return prune(mergedThere, previous.fields, others, new FieldSet(), ctx.type) as KubeObject;
}

/** The changes a manager recorded at `e.apiVersion` sees. */
function changesFor(
  e: ManagerEntry,
  ctx: FieldManagerContext,
  here: VersionChanges,
): VersionChanges {
  return (e.apiVersion !== ctx.apiVersion && ctx.changesAt?.get(e.apiVersion)) || here;
}

/** The manager kubectl uses for server-side apply: it keeps the client-side apply
 * annotation current and may take over fields recorded there without conflicts. */
export const KUBECTL_MANAGER = "kubectl";

/** The client-side apply annotation; kubectl writes the second key, read as an alias. */
export const LAST_APPLIED_KEYS = [
  "client.platform.io/last-applied-configuration",
  "kubectl.kubernetes.io/last-applied-configuration",
];

export const FIELD_MANAGER_MAX_LENGTH = 128;

const UTF8 = new TextEncoder();

/**
 * Applies `config` to `live` (undefined: the object does not exist yet) as `ctx.manager`.
 * Returns the object to store, with its managed fields; throws a 409 on conflicts.
 */
export function applyConfig(
  live: KubeObject | undefined,
  config: KubeObject,
  ctx: FieldManagerContext & { force: boolean },
): KubeObject {
  const t = ctx.type;
  checkDuplicates(config, t, []);
  const base = live ? withoutManagedFields(live) : {};
  const entries = live ? storedEntries(live.metadata?.managedFields, t) : [];
  const id = entryId({ ...ctx, operation: "Apply" });
  const previous = entries.find((e) => entryId(e) === id);
  const others = entries.filter((e) => e !== previous);
  const applied = ownable(fieldsOf(config, t), ctx);

  let merged = mergeValues(base, config, t) as KubeObject;
  if (previous && !previous.fields.isEmpty()) {
    if (ctx.prunedElsewhere && previous.apiVersion !== ctx.apiVersion) {
      // What this version's managers own (the applier's new fields among them) stays.
      let owned = applied;
      for (const o of others) if (o.apiVersion === ctx.apiVersion) owned = owned.union(o.fields);
      const toRemove = ctx.prunedElsewhere.difference(withNamedFieldsAsMembers(owned, t));
      if (!toRemove.isEmpty()) merged = removePaths(merged, toRemove, t) as KubeObject;
    } else {
      merged = prune(merged, previous.fields, others, applied, t) as KubeObject;
    }
  }

  const changes = compare(base, merged, t);
  const unchanged = live !== undefined && changes.added.isEmpty() &&
    changes.modified.isEmpty() && changes.removed.isEmpty();
  // The change sets are this function's own: merged and trimmed in place from here on.
  const changed = ownable(changes.added.merge(changes.modified), ctx);
  const removed = ownable(changes.removed, ctx);
  const here = { changed, removed };
  let conflicts: Conflict[] = [];
  for (const other of others) {
    const seen = changesFor(other, ctx, here);
    conflicts.push(...conflictsOf(other, other.fields.intersection(seen.changed)));
  }
  if (conflicts.length && !ctx.force) {
    if (ctx.manager === KUBECTL_MANAGER && live) {
      // Fields kubectl's client-side apply recorded and nobody changed since are kubectl's.
      const allowed = lastAppliedFields(live, t);
      if (allowed) conflicts = conflicts.filter((c) => !allowed.has(c.path));
    }
    if (conflicts.length) throw conflictError(conflicts);
  }
  for (const other of others) {
    const seen = changesFor(other, ctx, here);
    other.fields = other.fields.difference(seen.changed).difference(seen.removed);
  }

  const keepTime = previous && unchanged && previous.fields.equals(applied) &&
    previous.apiVersion === ctx.apiVersion;
  const entry: ManagerEntry = {
    manager: ctx.manager,
    operation: "Apply",
    apiVersion: ctx.apiVersion,
    subresource: ctx.subresource,
    time: keepTime ? previous.time : ctx.now,
    fields: applied,
  };
  setManagedFields(merged, [...others, entry]);
  if (ctx.manager === KUBECTL_MANAGER && live) keepLastAppliedCurrent(live, merged, config);
  return merged;
}

/**
 * Records the managed fields of a write that is not an apply: the writer (an Update entry
 * per manager, apiVersion and subresource) takes every field it added or changed from
 * `old` (undefined: a create) to `obj`; other managers lose them and what was removed.
 * Managed fields the client sent replace the stored ones (`[{}]` clears them all); an
 * empty list or none keeps the stored ones. Changes `obj` in place.
 */
export function trackUpdate(
  old: KubeObject | undefined,
  obj: KubeObject,
  ctx: FieldManagerContext,
): void {
  const t = ctx.type;
  const sent = obj.metadata?.managedFields;
  let entries: ManagerEntry[] | undefined;
  if (!ctx.subresource && Array.isArray(sent) && sent.length) {
    entries = decodeManagedFields(sent)?.map((e) => reconciled(e, t));
  }
  entries ??= old ? storedEntries(old.metadata?.managedFields, t) : [];
  const before = old ? withoutManagedFields(old) : ctx.emptyObject ?? {};
  const after = withoutManagedFields(obj);
  const changes = compare(before, after, t);
  const changed = ownable(changes.added.merge(changes.modified), ctx);
  const removed = ownable(changes.removed, ctx);

  const id = entryId({ ...ctx, operation: "Update" });
  let mine = entries.find((e) => entryId(e) === id);
  const here = { changed, removed };
  for (const e of entries) {
    const seen = changesFor(e, ctx, here);
    if (e !== mine) e.fields = e.fields.difference(seen.changed).difference(seen.removed);
  }
  if (mine) {
    mine.fields = mine.fields.difference(removed);
  } else if (!changed.isEmpty()) {
    mine = {
      manager: ctx.manager,
      operation: "Update",
      apiVersion: ctx.apiVersion,
      subresource: ctx.subresource,
      fields: new FieldSet(),
    };
    entries.push(mine);
  }
  if (mine && !changed.isEmpty()) {
    mine.fields = mine.fields.isEmpty() ? changed : mine.fields.union(changed);
    mine.time = ctx.now;
  }
  setManagedFields(obj, entries);
}

/** The manager of a write without `fieldManager`: the User-Agent up to its first `/`,
 * printable characters only, at most 128 bytes; `unknown` when that leaves nothing. */
export function managerFromUserAgent(userAgent: string | null): string {
  const head = (userAgent ?? "").split("/")[0];
  // Clients send the same few User-Agents again and again: each is worked out once.
  let out = managersByAgent.get(head);
  if (out !== undefined) return out;
  out = "";
  let bytes = 0;
  for (const ch of head) {
    if (!isPrintable(ch)) continue;
    const size = utf8Length(ch);
    if (bytes + size > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += size;
  }
  out ||= "unknown";
  if (head.length <= MAX_REMEMBERED_AGENT) {
    if (managersByAgent.size >= MANAGERS_BY_AGENT) managersByAgent.clear();
    managersByAgent.set(head, out);
  }
  return out;
}

/** User-Agent heads seen lately (up to {@link MANAGERS_BY_AGENT} of at most
 * {@link MAX_REMEMBERED_AGENT} characters), and their managers. */
const managersByAgent = new Map<string, string>();
const MANAGERS_BY_AGENT = 256;
/** Longer heads are worked out each time, so that the memo stays small. */
const MAX_REMEMBERED_AGENT = 256;

/** The UTF-8 bytes of one code point (`ch` as `for…of` a string gives it). */
function utf8Length(ch: string): number {
  const cp = ch.codePointAt(0)!;
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** The `fieldManager` parameter's rules: at most 128 bytes, printable characters only. */
export function validateFieldManager(name: string): FieldError[] {
  const errors: FieldError[] = [];
  if (UTF8.encode(name).length > FIELD_MANAGER_MAX_LENGTH) {
    errors.push({
      type: "TooLong",
      field: "fieldManager",
      detail: `may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`,
    });
  }
  const bad = [...name].findIndex((ch) => !isPrintable(ch));
  if (bad >= 0) {
    errors.push({
      type: "Invalid",
      field: "fieldManager",
      value: name,
      detail: `invalid characters at position ${bad}`,
    });
  }
  return errors;
}

function isPrintable(ch: string): boolean {
  // Letters, marks, numbers, punctuation, symbols and the ASCII space, as Go's unicode.IsPrint.
  return ch === " " || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);
}

// ---- pieces ----

/**
 * Removes from `merged` what the applier applied last time (`previous`) and omits now,
 * unless another manager, or the new configuration, owns it. A struct field the applier
 * owned something under counts as owned itself, so it goes whole once nobody owns anything
 * beneath it.
 */
function prune(
  merged: unknown,
  previous: FieldSet,
  others: ManagerEntry[],
  applied: FieldSet,
  t: FieldType,
): unknown {
  let managed = applied;
  for (const o of others) managed = managed.union(o.fields);
  const present = withNamedFieldsAsMembers(fieldsOf(merged, t), t);
  const toRemove = present
    .difference(withNamedFieldsAsMembers(managed, t))
    .intersection(withNamedFieldsAsMembers(previous, t));
  return toRemove.isEmpty() ? merged : removePaths(merged, toRemove, t);
}

/** `set` without what no manager may own: the object's identity and server-set metadata,
 * and the fields this endpoint resets. Changes `set` in place (callers pass sets of their
 * own) and returns it. */
function ownable(set: FieldSet, ctx: FieldManagerContext): FieldSet {
  const out = set;
  out.children.delete("f:apiVersion");
  out.children.delete("f:kind");
  for (const f of ctx.ignoredFields) out.children.delete(`f:${f}`);
  const meta = out.children.get("f:metadata");
  if (meta) {
    meta.member = false;
    for (const el of SERVER_METADATA) meta.children.delete(el);
    if (meta.isEmpty()) out.children.delete("f:metadata");
  }
  return out;
}

/** The path elements of server-set metadata (made once: every write looks them up). */
const SERVER_METADATA = [
  "name",
  "namespace",
  "creationTimestamp",
  "selfLink",
  "uid",
  "clusterName",
  "generation",
  "managedFields",
  "resourceVersion",
].map((f) => `f:${f}`);

/** The stored entries, read against the current schema; malformed ones are dropped. */
function storedEntries(raw: unknown, t: FieldType): ManagerEntry[] {
  return (decodeManagedFields(raw) ?? []).map((e) => reconciled(e, t));
}

function reconciled(e: ManagerEntry, t: FieldType): ManagerEntry {
  return { ...e, fields: reconcileWithSchema(e.fields, t) };
}

function setManagedFields(obj: KubeObject, entries: ManagerEntry[]): void {
  if (!isObject(obj.metadata)) obj.metadata = {};
  const encoded = encodeManagedFields(entries);
  if (encoded) obj.metadata.managedFields = encoded;
  else delete obj.metadata.managedFields;
}

/** A shallow copy of `obj` whose metadata has no managedFields. */
function withoutManagedFields(obj: KubeObject): KubeObject {
  if (!isObject(obj.metadata) || !("managedFields" in obj.metadata)) return obj;
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** A configuration naming one list item or set member twice is refused, as kube does. */
function checkDuplicates(v: unknown, t: FieldType, path: string[]): void {
  if (Array.isArray(v)) {
    if (t.shape === "list" && (t.listType === "set" || t.listType === "map")) {
      const dup = duplicateElement(t, v);
      if (dup) {
        throw badRequest(
          `failed to create typed patch object: ${pathString(path)}: duplicate entries for ${
            t.listType === "map" ? "key" : "value"
          } ${pathString([dup])}`,
        );
      }
      const items = t.items ?? UNTYPED;
      for (const item of v) checkDuplicates(item, items, path);
    }
    return;
  }
  if (isObject(v)) {
    for (const [k, cv] of Object.entries(v)) {
      checkDuplicates(cv, fieldType(t, k), [...path, `f:${k}`]);
    }
  }
}

// ---- client-side apply ----

function lastApplied(obj: KubeObject): { key: string; value: string } | undefined {
  const annotations = obj.metadata?.annotations;
  if (!isObject(annotations)) return undefined;
  for (const key of LAST_APPLIED_KEYS) {
    const value = annotations[key];
    if (typeof value === "string" && value) return { key, value };
  }
  return undefined;
}

/** What the client-side apply annotation records and the live object still holds unchanged:
 * the fields a move from client-side to server-side apply takes without conflicts. */
function lastAppliedFields(live: KubeObject, t: FieldType): FieldSet | undefined {
  const recorded = lastApplied(live);
  if (!recorded) return undefined;
  let config: unknown;
  try {
    config = JSON.parse(recorded.value);
  } catch {
    return undefined;
  }
  if (!isObject(config)) return undefined;
  const set = fieldsOf(config, t);
  const drift = compare(config, withoutManagedFields(live), t).modified;
  return set.difference(drift);
}

/** A server-side apply by kubectl keeps an existing client-side apply annotation current,
 * so that going back to client-side apply works. */
function keepLastAppliedCurrent(live: KubeObject, merged: KubeObject, config: KubeObject): void {
  if (!lastApplied(live)) return;
  const recorded = structuredClone(config);
  if (isObject(recorded.metadata?.annotations)) {
    for (const key of LAST_APPLIED_KEYS) delete recorded.metadata.annotations[key];
    if (!Object.keys(recorded.metadata.annotations).length) delete recorded.metadata.annotations;
  }
  const text = JSON.stringify(recorded);
  merged.metadata.annotations = { ...merged.metadata.annotations };
  for (const key of LAST_APPLIED_KEYS) {
    if (typeof live.metadata.annotations[key] === "string") merged.metadata.annotations[key] = text;
  }
}

export { FieldSet } from "./fieldset.ts";
export {
  parentManagedFields,
  SCALE_GROUP_VERSION,
  type ScaleFieldsContext,
  scaleManagedFields,
} from "./scale_fields.ts";
