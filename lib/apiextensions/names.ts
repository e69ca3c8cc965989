/**
 * The naming check: which of a CRD's requested names (plural, singular, short names, kind,
 * list kind) it may have, given the names other CRDs of its group were accepted with and the
 * built-in resources of that group, and the `NamesAccepted` and `Established` conditions
 * that follow. Names once accepted stay accepted; a conflicting new name is left out of
 * `status.acceptedNames` and reported.
 */

import type { KubeObject, ResourceDefinition } from "../registry/mod.ts";
import { type Condition, findCondition } from "./conditions.ts";

/** Names taken in one group: resource names (plural, singular, short names) and kinds
 * (kind, list kind). */
export interface NamesInUse {
  resources: Set<string>;
  kinds: Set<string>;
}

/** The names of `group` taken by built-in definitions and by `others` (other CRDs, by their
 * accepted names). */
export function namesInUse(
  group: string,
  others: Iterable<KubeObject>,
  builtins: Iterable<ResourceDefinition>,
): NamesInUse {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const def of builtins) {
    if (def.group !== group || def.customResource) continue;
    resources.add(def.plural);
    resources.add(def.singular);
    for (const s of def.shortNames ?? []) resources.add(s);
    kinds.add(def.kind);
    kinds.add(`${def.kind}List`);
  }
  for (const crd of others) {
    if (crd.spec?.group !== group) continue;
    const names = crd.status?.acceptedNames ?? {};
    for (const n of [names.plural, names.singular, ...(names.shortNames ?? [])]) {
      if (typeof n === "string" && n) resources.add(n);
    }
    for (const n of [names.kind, names.listKind]) {
      if (typeof n === "string" && n) kinds.add(n);
    }
  }
  return { resources, kinds };
}

export interface NamingResult {
  acceptedNames: KubeObject;
  namesAccepted: Condition;
  established: Condition;
}

/** A requested name is fine when it is the accepted one or nobody else uses it. */
function conflict(requested: unknown, accepted: unknown, used: Set<string>): string | undefined {
  if (requested === accepted || typeof requested !== "string" || !used.has(requested)) {
    return undefined;
  }
  return `${JSON.stringify(requested)} is already in use`;
}

/**
 * The accepted names and the NamesAccepted / Established conditions of `crd` (without
 * `lastTransitionTime`). Established becomes True the first time all names are accepted and
 * then stays True.
 */
export function checkNames(crd: KubeObject, used: NamesInUse): NamingResult {
  const requested = crd.spec?.names ?? {};
  const accepted = crd.status?.acceptedNames ?? {};
  const next: KubeObject = { ...accepted };
  let reason: string | undefined;
  let message: string | undefined;
  const fail = (why: string, msg: string) => {
    reason = why;
    message = msg;
  };

  let err = conflict(requested.plural, accepted.plural, used.resources);
  if (err) fail("PluralConflict", err);
  else next.plural = requested.plural;
  err = conflict(requested.singular, accepted.singular, used.resources);
  if (err) fail("SingularConflict", err);
  else next.singular = requested.singular;
  const wantedShort: string[] = Array.isArray(requested.shortNames) ? requested.shortNames : [];
  const ownShort = new Set<string>(Array.isArray(accepted.shortNames) ? accepted.shortNames : []);
  const shortErrors = wantedShort
    .filter((s) => !ownShort.has(s))
    .map((s) => conflict(s, "", used.resources))
    .filter((e): e is string => e !== undefined);
  if (shortErrors.length) {
    fail(
      "ShortNamesConflict",
      shortErrors.length === 1 ? shortErrors[0] : `[${shortErrors.join(", ")}]`,
    );
  } else if (wantedShort.length) next.shortNames = [...wantedShort];
  else delete next.shortNames;
  err = conflict(requested.kind, accepted.kind, used.kinds);
  if (err) fail("KindConflict", err);
  else next.kind = requested.kind;
  err = conflict(requested.listKind, accepted.listKind, used.kinds);
  if (err) fail("ListKindConflict", err);
  else next.listKind = requested.listKind;
  if (Array.isArray(requested.categories) && requested.categories.length) {
    next.categories = [...requested.categories];
  } else delete next.categories;
  for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
  // Like Kubernetes' Go types: plural and kind are always written, empty until accepted.
  next.plural ??= "";
  next.kind ??= "";

  const namesAccepted: Condition = reason
    ? { type: "NamesAccepted", status: "False", reason, message }
    : {
      type: "NamesAccepted",
      status: "True",
      reason: "NoConflicts",
      message: "no conflicts found",
    };
  const old = findCondition(crd, "Established");
  let established: Condition = old
    ? { type: "Established", status: old.status, reason: old.reason, message: old.message }
    : {
      type: "Established",
      status: "False",
      reason: "NotAccepted",
      message: "not all names are accepted",
    };
  if (established.status !== "True" && namesAccepted.status === "True") {
    established = {
      type: "Established",
      status: "True",
      reason: "InitialNamesAccepted",
      message: "the initial names have been accepted",
    };
  }
  return { acceptedNames: next, namesAccepted, established };
}
