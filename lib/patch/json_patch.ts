/**
 * JSON Patch (RFC 6902, `application/json-patch+json`) on `fast-json-patch`, with the status
 * codes Kubernetes gives: a body that is not a list of operations is 400; an operation that
 * cannot apply (a failed `test`, a missing path, a bad index) is 422 naming the operation;
 * more than {@link MAX_JSON_PATCH_OPERATIONS} operations is 413.
 *
 * Neither the document nor the patch is mutated: the library works on deep copies. Paths
 * through `__proto__` or `constructor/prototype` are refused (422).
 */

import jsonpatch from "fast-json-patch";
import { badRequest, jsonEqual, StatusError } from "../api/mod.ts";

/** Kubernetes' limit on the number of operations in one JSON Patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

const OPS = new Set(["add", "remove", "replace", "move", "copy", "test"]);

/** RFC 6901 array index: a plain decimal without leading zeros ("01", "1e0", "" are not). */
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

const MISSING = "doc is missing path";
const MISSING_FROM = "doc is missing from path";

/** Applies `patch` (the parsed request body) to `doc`; returns a new document. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  // The patch is copied too: the library inserts operation values by reference, so a later
  // operation would otherwise write into the caller's patch.
  const ops = structuredClone(checkOperations(patch));
  let out = structuredClone(doc);
  ops.forEach((op, i) => {
    // Every location is checked here first (see problemAt), so the library only ever runs
    // an operation that applies.
    const check = (pointer: string, adding: boolean, from = false) => {
      const why = problemAt(out, pointer, adding);
      if (why) throw doesNotApply(op.op, from && why === MISSING ? MISSING_FROM : why, pointer, i);
    };
    switch (op.op) {
      case "test":
        check(op.path, false);
        // Not the library's comparison: it throws a TypeError on a `hasOwnProperty` member.
        if (!jsonEqual(valueAt(out, op.path), op.value)) {
          throw doesNotApply(op.op, "test failed", op.path, i);
        }
        return;
      case "move": {
        // A remove then an add (RFC 6902 4.4), the add checked against the document the
        // remove leaves: the library runs that add unchecked.
        check(op.from, false, true);
        if (op.path.startsWith(`${op.from}/`)) {
          throw doesNotApply(op.op, "cannot move a value into its own child", op.path, i);
        }
        const value = valueAt(out, op.from);
        out = run(out, { op: "remove", path: op.from }, i);
        check(op.path, true);
        out = run(out, { op: "add", path: op.path, value }, i);
        return;
      }
      case "copy":
        check(op.from, false, true);
        check(op.path, true);
        break;
      default:
        check(op.path, op.op === "add");
    }
    out = run(out, op, i);
  });
  return out;
}

function run(doc: unknown, op: jsonpatch.Operation, i: number): unknown {
  try {
    return jsonpatch.applyOperation(doc, op, true, true, true, i).newDocument;
  } catch (err) {
    if (err instanceof jsonpatch.JsonPatchError) throw operationFailed(err);
    throw err;
  }
}

/** The patch as a list of well-formed operations, or a 400 naming what is wrong. */
function checkOperations(patch: unknown): jsonpatch.Operation[] {
  if (!Array.isArray(patch)) {
    throw badRequest(
      `json: cannot unmarshal ${kindOf(patch)} into Go value of type jsonpatch.Patch`,
    );
  }
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new StatusError(
      413,
      "RequestEntityTooLarge",
      `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`,
    );
  }
  patch.forEach((op, i) => {
    if (!op || typeof op !== "object" || Array.isArray(op)) {
      throw badRequest(
        `json: cannot unmarshal ${kindOf(op)} into Go value of type jsonpatch.Operation`,
      );
    }
    const o = op as Record<string, unknown>;
    if (typeof o.op !== "string" || !OPS.has(o.op)) {
      throw unprocessable(`Unexpected kind: ${typeof o.op === "string" ? o.op : "unknown"}`, i);
    }
    if (typeof o.path !== "string") {
      throw unprocessable(`${o.op} operation is missing path`, i);
    }
    if ((o.op === "move" || o.op === "copy") && typeof o.from !== "string") {
      throw unprocessable(`${o.op} operation is missing from`, i);
    }
    if ((o.op === "add" || o.op === "replace" || o.op === "test") && !Object.hasOwn(o, "value")) {
      throw unprocessable(`${o.op} operation is missing value`, i);
    }
  });
  return patch as jsonpatch.Operation[];
}

/**
 * Why `pointer` does not name a value in `doc` (with `adding`: a place a value can be added,
 * i.e. an existing parent and a new key, an index up to the length, or "-"); "" if it does.
 * Stricter than the library, which takes "01" or a 2^32-wrapped number as an index and
 * inherited members such as `toString` as present.
 */
function problemAt(doc: unknown, pointer: string, adding: boolean): string {
  const tokens = tokensOf(pointer);
  if (!tokens) return "invalid path";
  // What the library bans (with a TypeError): a 422 here.
  const banned = (t: string, n: number) =>
    t === "__proto__" || (t === "prototype" && tokens[n - 1] === "constructor");
  if (tokens.some(banned)) return "prototype keys are not allowed in a path";
  let node = doc;
  for (const [n, token] of tokens.entries()) {
    const last = n === tokens.length - 1;
    if (Array.isArray(node)) {
      if (adding && last && token === "-") return "";
      if (!ARRAY_INDEX.test(token)) return "invalid array index";
      const index = Number(token);
      if (index > node.length || (index === node.length && !(adding && last))) {
        return "array index out of bounds";
      }
      node = node[index];
    } else if (node !== null && typeof node === "object") {
      if (!Object.hasOwn(node, token)) return adding && last ? "" : MISSING;
      node = (node as Record<string, unknown>)[token];
    } else {
      return MISSING;
    }
  }
  return "";
}

/** The unescaped reference tokens of a JSON pointer, or undefined if it is not one. */
function tokensOf(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return undefined;
  return pointer.slice(1).split("/").map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The value at a pointer {@link problemAt} has accepted. */
function valueAt(doc: unknown, pointer: string): unknown {
  return tokensOf(pointer)!.reduce<unknown>(
    (node, token) => (node as Record<string, unknown>)[token],
    doc,
  );
}

const WHY: Record<string, string> = {
  TEST_OPERATION_FAILED: "test failed",
  OPERATION_PATH_UNRESOLVABLE: MISSING,
  OPERATION_FROM_UNRESOLVABLE: MISSING_FROM,
  OPERATION_PATH_CANNOT_ADD: MISSING,
  OPERATION_PATH_ILLEGAL_ARRAY_INDEX: "invalid array index",
  OPERATION_VALUE_OUT_OF_BOUNDS: "array index out of bounds",
  OPERATION_PATH_INVALID: "invalid path",
  OPERATION_OP_INVALID: "invalid operation",
  OPERATION_VALUE_REQUIRED: "missing value",
  OPERATION_FROM_REQUIRED: "missing from",
  OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED: "invalid value",
};

/**
 * A library error as kube's 422, without the document (the library's message embeds it). A
 * fallback: the checks above leave the library nothing to refuse.
 */
function operationFailed(err: InstanceType<typeof jsonpatch.JsonPatchError>): StatusError {
  const op = err.operation as { op?: string; path?: string; from?: string } | undefined;
  const why = WHY[err.name] ?? "cannot apply";
  const where = op?.from !== undefined && err.name === "OPERATION_FROM_UNRESOLVABLE"
    ? op.from
    : op?.path ?? "";
  return doesNotApply(op?.op ?? "an", why, where, err.index);
}

function doesNotApply(op: string, why: string, where: string, index?: number): StatusError {
  return unprocessable(
    op === "test"
      ? `testing value ${where} failed: ${why}`
      : `${op} operation does not apply: ${why}: ${where}`,
    index,
  );
}

function unprocessable(message: string, index?: number): StatusError {
  return new StatusError(
    422,
    "Invalid",
    index === undefined ? message : `${message} (operation ${index})`,
  );
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "object") return "object";
  return typeof v;
}
