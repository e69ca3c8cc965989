/**
 * The read options of get, list and watch (spec 01, Resource versions): parsing and validating
 * `resourceVersion`, `resourceVersionMatch`, `limit`, `continue`, `sendInitialEvents` and
 * `allowWatchBookmarks`, and waiting for a resourceVersion the server has not reached yet.
 *
 * Validation follows kube's ListOptions rules and messages: combinations the tables mark
 * Invalid are 422 (a ListOptions error naming the parameter), except `limit` + `continue` + a
 * resourceVersion other than `0`, which is 400.
 */

import { badRequest, type FieldError, invalid, StatusError } from "../../api/mod.ts";
import { parseQueryBool } from "../request_info.ts";

/** How long a read waits for a resourceVersion newer than the store's before answering 504. */
export const FUTURE_WAIT_MS = 3000;

/** A resourceVersion as a revision; 400 when it is not one. */
export function parseResourceVersion(value: string): number {
  const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw badRequest(`invalid resource version: "${value}"`);
  return n;
}

export function parseLimit(v: string | null): number | undefined {
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw badRequest("limit must be a non-negative integer");
  return n || undefined;
}

export type ResourceVersionMatch = "" | "Exact" | "NotOlderThan";

/** The read options of a list or watch request, validated. */
export interface ReadOptions {
  /** `resourceVersion` as given ("" when absent). */
  resourceVersion: string;
  match: ResourceVersionMatch;
  limit?: number;
  continue: string;
  allowWatchBookmarks: boolean;
  /** `sendInitialEvents`, when given (watch only). */
  sendInitialEvents?: boolean;
}

function forbidden(field: string, detail: string): FieldError {
  return { type: "Forbidden", field, detail };
}

function notSupported(field: string, value: string, values: string[]): FieldError {
  return {
    type: "NotSupported",
    field,
    value,
    detail: `supported values: ${values.map((v) => JSON.stringify(v)).join(", ")}`,
  };
}

/**
 * Parses and validates the options of a list (`watch` false) or watch. `watchList`: whether
 * the WatchList feature gate is on.
 */
export function readOptionsOf(
  q: URLSearchParams,
  opts: { watch: boolean; watchList: boolean },
): ReadOptions {
  const o: ReadOptions = {
    resourceVersion: q.get("resourceVersion") ?? "",
    match: (q.get("resourceVersionMatch") ?? "") as ResourceVersionMatch,
    limit: parseLimit(q.get("limit")),
    continue: q.get("continue") ?? "",
    allowWatchBookmarks: parseQueryBool(q.get("allowWatchBookmarks")) ?? false,
    sendInitialEvents: parseQueryBool(q.get("sendInitialEvents")),
  };
  const errors = opts.watch ? watchErrors(o, opts.watchList) : listErrors(o);
  if (errors.length) throw invalid("ListOptions", "meta.platform.io", "", errors);
  if (o.resourceVersion !== "") parseResourceVersion(o.resourceVersion);
  if (!opts.watch && o.continue && o.resourceVersion !== "" && o.resourceVersion !== "0") {
    throw badRequest("specifying resource version is not allowed when using continue");
  }
  return o;
}

function listErrors(o: ReadOptions): FieldError[] {
  const errors: FieldError[] = [];
  const m = o.match;
  if (m) {
    if (!o.resourceVersion) {
      errors.push(forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
      ));
    }
    if (o.continue) {
      errors.push(forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden when continue is provided",
      ));
    }
    if (m !== "Exact" && m !== "NotOlderThan") {
      errors.push(notSupported("resourceVersionMatch", m, ["Exact", "NotOlderThan", ""]));
    }
    if (m === "Exact" && o.resourceVersion === "0") {
      errors.push(forbidden(
        "resourceVersionMatch",
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      ));
    }
  }
  if (o.sendInitialEvents !== undefined) {
    errors.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
  }
  return errors;
}

function watchErrors(o: ReadOptions, watchList: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const m = o.match;
  if (o.sendInitialEvents !== undefined) {
    if (m !== "NotOlderThan") {
      errors.push(forbidden(
        "resourceVersionMatch",
        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
      ));
    }
    if (!watchList) {
      errors.push(forbidden(
        "sendInitialEvents",
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
      ));
    }
  }
  if (m) {
    if (o.sendInitialEvents === undefined) {
      errors.push(forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
      ));
    }
    if (m !== "NotOlderThan") {
      errors.push(notSupported("resourceVersionMatch", m, ["NotOlderThan"]));
    }
    if (o.continue) {
      errors.push(forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden when continue is provided",
      ));
    }
  }
  return errors;
}

/** kube's answer for a resourceVersion the server has not reached in time. */
export function tooLargeResourceVersion(rv: number, current: number): StatusError {
  return new StatusError(
    504,
    "Timeout",
    `Too large resource version: ${rv}, current: ${current}`,
    {
      details: {
        causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
        retryAfterSeconds: 1,
      },
      headers: { "Retry-After": "1" },
    },
  );
}

/** Waits (up to {@link FUTURE_WAIT_MS}) until `current()` reaches `rv`; 504 after that. */
export async function waitForRevision(
  current: () => number,
  rv: number,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + FUTURE_WAIT_MS;
  while (current() < rv) {
    if (Date.now() >= deadline || signal?.aborted) {
      throw tooLargeResourceVersion(rv, current());
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
