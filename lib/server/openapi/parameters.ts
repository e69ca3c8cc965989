/**
 * The parameters of the operations: the query parameters of list, watch, write, patch and
 * delete requests, described in our own words, and the `name` and `namespace` path parameters.
 */

export interface Param {
  name: string;
  in: "query" | "path";
  type: "string" | "boolean" | "integer";
  description: string;
}

function query(name: string, type: Param["type"], description: string): Param {
  return { name, in: "query", type, description };
}

/** Query parameters, in our own words. */
export const Q = {
  allowWatchBookmarks: query(
    "allowWatchBookmarks",
    "boolean",
    "With watch=true, ask for BOOKMARK events, which carry only a resourceVersion to resume " +
      "from. Servers may send them at any time; clients must not rely on when.",
  ),
  continue: query(
    "continue",
    "string",
    "The token of a previous paginated list response (metadata.continue) to read the next " +
      "page. Use it with the same query parameters. An expired token yields 410 Gone. Not " +
      "valid with watch=true.",
  ),
  dryRun: query(
    "dryRun",
    "string",
    "When set to All, the request is validated and admitted but nothing is stored. Any other " +
      "value is rejected.",
  ),
  fieldManager: query(
    "fieldManager",
    "string",
    "The name of the actor making the change, recorded in metadata.managedFields. At most 128 " +
      "printable characters. Required for apply patches; optional otherwise.",
  ),
  fieldSelector: query(
    "fieldSelector",
    "string",
    "Restrict the result to objects whose fields match, e.g. metadata.name=x. Empty selects " +
      "everything.",
  ),
  fieldValidation: query(
    "fieldValidation",
    "string",
    "What to do with fields the schema does not know and with duplicate fields: Ignore drops " +
      "them silently, Warn (the default) drops them and returns a Warning header for each, " +
      "Strict fails the request.",
  ),
  force: query(
    "force",
    "boolean",
    "For apply patches only: take ownership of fields other managers own instead of failing " +
      "with a conflict. Must be unset for other patch types.",
  ),
  gracePeriodSeconds: query(
    "gracePeriodSeconds",
    "integer",
    "Seconds to wait before the object is deleted; a non-negative integer, 0 means now. " +
      "Unset uses the resource's default.",
  ),
  ignoreStoreReadErrorWithClusterBreakingPotential: query(
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "boolean",
    "With the AllowUnsafeMalformedObjectDeletion gate: delete an object the server cannot " +
      "read (e.g. encrypted with a key no longer configured) without reading it, skipping " +
      "finalizers, preconditions and admission. Needs the unsafe-delete-ignore-read-errors verb; " +
      "refused on a readable object. May break what depends on the object.",
  ),
  labelSelector: query(
    "labelSelector",
    "string",
    "Restrict the result to objects whose labels match, e.g. app=web,tier!=db. Empty selects " +
      "everything.",
  ),
  limit: query(
    "limit",
    "integer",
    "The largest number of items to return. When more remain, metadata.continue holds a " +
      "token for the next page. Not valid with watch=true.",
  ),
  orphanDependents: query(
    "orphanDependents",
    "boolean",
    "Deprecated, use propagationPolicy. true orphans dependent objects, false deletes them. " +
      "Set at most one of the two.",
  ),
  pretty: query("pretty", "string", "If 'true', indent the response for humans."),
  propagationPolicy: query(
    "propagationPolicy",
    "string",
    "How dependents are garbage collected: Orphan, Background or Foreground. Unset uses the " +
      "object's finalizers and the resource's default.",
  ),
  resourceVersion: query(
    "resourceVersion",
    "string",
    "Which version of the data may serve the request: unset for the most recent, 0 for any, " +
      "or a specific resourceVersion (see resourceVersionMatch).",
  ),
  resourceVersionMatch: query(
    "resourceVersionMatch",
    "string",
    "How resourceVersion applies to a list: NotOlderThan or Exact. Set it whenever " +
      "resourceVersion is set for a list.",
  ),
  sendInitialEvents: query(
    "sendInitialEvents",
    "boolean",
    "With watch=true, start the stream with ADDED events for the current objects, followed " +
      "by a BOOKMARK annotated as the end of the initial events. Requires " +
      "resourceVersionMatch=NotOlderThan.",
  ),
  timeoutSeconds: query(
    "timeoutSeconds",
    "integer",
    "The most seconds the list or watch call may take, whether or not anything happens.",
  ),
  watch: query(
    "watch",
    "boolean",
    "Stream add, update and delete notifications for the selected objects instead of " +
      "returning a list. Pair with resourceVersion to resume.",
  ),
};

export const LIST_PARAMS = [
  Q.allowWatchBookmarks,
  Q.continue,
  Q.fieldSelector,
  Q.labelSelector,
  Q.limit,
  Q.resourceVersion,
  Q.resourceVersionMatch,
  Q.sendInitialEvents,
  Q.timeoutSeconds,
  Q.watch,
];
export const WRITE_PARAMS = [Q.dryRun, Q.fieldManager, Q.fieldValidation];
export const PATCH_PARAMS = [...WRITE_PARAMS, Q.force];
export const DELETE_PARAMS = [
  Q.dryRun,
  Q.gracePeriodSeconds,
  Q.ignoreStoreReadErrorWithClusterBreakingPotential,
  Q.orphanDependents,
  Q.propagationPolicy,
];
export const DELETE_COLLECTION_PARAMS = [
  Q.continue,
  Q.dryRun,
  Q.fieldSelector,
  Q.gracePeriodSeconds,
  Q.ignoreStoreReadErrorWithClusterBreakingPotential,
  Q.labelSelector,
  Q.limit,
  Q.orphanDependents,
  Q.propagationPolicy,
  Q.resourceVersion,
  Q.resourceVersionMatch,
  Q.sendInitialEvents,
  Q.timeoutSeconds,
];

export function nameParam(kind: string): Param {
  return { name: "name", in: "path", type: "string", description: `name of the ${kind}` };
}

export const NAMESPACE_PARAM: Param = {
  name: "namespace",
  in: "path",
  type: "string",
  description: "the namespace of the object, which scopes its name and authorization",
};
