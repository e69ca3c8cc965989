/**
 * JSON Patch (RFC 6902, `application/json-patch+json`) on `fast-json-patch`, with the status
 * codes Kubernetes gives: a body that is not a list of operations is 400; an operation that
 * cannot apply (a failed `test`, a missing path, a bad index) is 422 naming the operation;
 * more than {@link MAX_JSON_PATCH_OPERATIONS} operations is 413.
 *
 * The document is never mutated: the library works on a deep copy. Prototype keys
 * (`__proto__`, `constructor`, `prototype`) in paths are refused.
 */

import jsonpatch from "fast-json-patch";
import { badRequest, StatusError } from "../api/errors.ts";

/** Kubernetes' limit on the number of operations in one JSON Patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

const OPS = new Set(["add", "remove", "replace", "move", "copy", "test"]);

/** Applies `patch` (the parsed request body) to `doc`; returns a new document. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  const ops = checkOperations(patch);
  try {
    return jsonpatch.applyPatch(structuredClone(doc), ops, true, true, true).newDocument;
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

const WHY: Record<string, string> = {
  TEST_OPERATION_FAILED: "test failed",
  OPERATION_PATH_UNRESOLVABLE: "doc is missing path",
  OPERATION_FROM_UNRESOLVABLE: "doc is missing from path",
  OPERATION_PATH_CANNOT_ADD: "doc is missing path",
  OPERATION_PATH_ILLEGAL_ARRAY_INDEX: "invalid array index",
  OPERATION_VALUE_OUT_OF_BOUNDS: "array index out of bounds",
  OPERATION_PATH_INVALID: "invalid path",
  OPERATION_OP_INVALID: "invalid operation",
  OPERATION_VALUE_REQUIRED: "missing value",
  OPERATION_FROM_REQUIRED: "missing from",
  OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED: "invalid value",
};

/** A library error as kube's 422, without the document (the library's message embeds it). */
function operationFailed(err: InstanceType<typeof jsonpatch.JsonPatchError>): StatusError {
  const op = err.operation as { op?: string; path?: string; from?: string } | undefined;
  const why = WHY[err.name] ?? "cannot apply";
  const where = op?.from !== undefined && err.name === "OPERATION_FROM_UNRESOLVABLE"
    ? op.from
    : op?.path ?? "";
  const message = op?.op === "test"
    ? `testing value ${where} failed: ${why}`
    : `${op?.op ?? "an"} operation does not apply: ${why}: ${where}`;
  return unprocessable(message, err.index);
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
