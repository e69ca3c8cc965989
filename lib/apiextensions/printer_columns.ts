/**
 * Printer columns of custom resources: a CRD version's `additionalPrinterColumns` as the
 * {@link PrinterColumn}s of its Table responses (what `kubectl get` prints), and the checks
 * they pass when a CRD is written, as Kubernetes has them.
 *
 * A column's cell is the first value its `jsonPath` (kubectl's JSONPath dialect, without the
 * braces) finds in the object; none, or a value of another type than the column's, shows as
 * `<none>`. `integer` cells are whole numbers, `number`, `boolean` cells as found, `string`
 * cells the value as kubectl's JSONPath prints it (objects and lists as JSON), and `date`
 * cells the age of an RFC 3339 timestamp (`5m`, `3d`; `<invalid>` when it is not one).
 * Columns with `priority` above 0 show only with `-o wide`. A version without columns gets
 * kube's default one: `Age`, from `.metadata.creationTimestamp`. The Name column always comes
 * first (the Table code adds it).
 */

import { type FieldError, humanDuration, type KubeObject, type PrinterColumn } from "../api/mod.ts";
import { type CompiledJsonPath, compileJsonPath } from "../printers/mod.ts";
import { SchemaSet } from "../schema/mod.ts";
import { simplePathErrors } from "./scale.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const TYPES = ["boolean", "date", "integer", "number", "string"];
const FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"];

/** kube's column when a version declares none, described as ObjectMeta's field is. */
const DEFAULT_COLUMNS = [{
  name: "Age",
  type: "date",
  description: SchemaSet.builtin().get("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    ?.properties?.creationTimestamp?.description,
  jsonPath: ".metadata.creationTimestamp",
}];

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The Table columns of a version's `additionalPrinterColumns` (its default Age column when
 * there are none). A column whose path does not parse ends the list there, as kube's table
 * convertor ends at it. `now` is the clock of `date` cells.
 */
export function printerColumns(
  columns: unknown,
  now: () => Date = () => new Date(),
): PrinterColumn[] {
  const declared = Array.isArray(columns) && columns.length ? columns : DEFAULT_COLUMNS;
  const out: PrinterColumn[] = [];
  // Prints one value as kubectl's JSONPath prints it.
  const printer = compileJsonPath("{.v}");
  for (const col of declared) {
    if (!isObject(col) || typeof col.jsonPath !== "string") break;
    let path: CompiledJsonPath;
    try {
      path = compileJsonPath(`{${col.jsonPath}}`);
    } catch {
      break;
    }
    const type: PrinterColumn["type"] = TYPES.includes(col.type) ? col.type : "string";
    const column: PrinterColumn = {
      name: String(col.name ?? ""),
      type,
      description: typeof col.description === "string" && col.description
        ? col.description
        : `Custom resource definition column (in JSONPath format): ${col.jsonPath}`,
      priority: typeof col.priority === "number" ? col.priority : 0,
      value: (obj: KubeObject) => cell(type, firstValue(path, obj), printer, now),
    };
    if (typeof col.format === "string" && col.format) column.format = col.format;
    out.push(column);
  }
  return out;
}

function firstValue(path: CompiledJsonPath, obj: KubeObject): unknown {
  try {
    return path.evaluate(obj)[0]?.[0];
  } catch {
    return undefined;
  }
}

/** The cell of a value found for a column of `type`: undefined (`<none>`) when it does not
 * fit the type. */
function cell(
  type: PrinterColumn["type"],
  value: unknown,
  printer: CompiledJsonPath,
  now: () => Date,
): unknown {
  if (value === undefined || value === null) return undefined;
  switch (type) {
    case "string":
      return typeof value === "string" ? value : printer.print({ v: value });
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : undefined;
    case "number":
      return typeof value === "number" ? value : undefined;
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "date": {
      if (typeof value !== "string") return undefined;
      const t = RFC3339.test(value) ? Date.parse(value) : NaN;
      if (Number.isNaN(t)) return "<invalid>";
      return humanDuration(now().getTime() - t);
    }
  }
}

/** Errors of a version's `additionalPrinterColumns` at `path`, worded and placed as kube's
 * (kube names the path field `JSONPath`). Missing required fields are the schema's to report. */
export function validatePrinterColumns(columns: unknown, path: string): FieldError[] {
  if (!Array.isArray(columns)) return [];
  const errs: FieldError[] = [];
  columns.forEach((col: Json, i: number) => {
    if (!isObject(col)) return;
    const at = `${path}[${i}]`;
    if (typeof col.type === "string" && col.type && !TYPES.includes(col.type)) {
      errs.push({
        type: "Invalid",
        field: `${at}.type`,
        value: col.type,
        detail: `must be one of ${TYPES.join(",")}`,
      });
    }
    if (typeof col.format === "string" && col.format && !FORMATS.includes(col.format)) {
      errs.push({
        type: "Invalid",
        field: `${at}.format`,
        value: col.format,
        detail: `must be one of ${FORMATS.join(",")}`,
      });
    }
    if (typeof col.jsonPath === "string" && col.jsonPath) {
      errs.push(...simplePathErrors(col.jsonPath, `${at}.JSONPath`));
    }
  });
  return errs;
}
