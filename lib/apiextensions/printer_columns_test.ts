import { assertEquals } from "../../tests/assert.ts";
import { printerColumns, validatePrinterColumns } from "./printer_columns.ts";
import { fieldErrorMessage } from "../api/mod.ts";

const NOW = () => new Date("2026-01-02T03:04:05Z");

const obj = {
  metadata: { name: "a", creationTimestamp: "2026-01-02T02:59:05Z" },
  spec: {
    replicas: 3,
    ratio: 0.25,
    big: 1e21,
    on: true,
    zones: ["a", "b"],
    labels: { x: "1" },
    when: "yesterday",
    items: [{ name: "first" }, { name: "second" }],
  },
};

function cells(columns: unknown[]): unknown[] {
  return printerColumns(columns, NOW).map((c) => c.value(obj));
}

Deno.test("printer columns: cells by type, as kube's table convertor makes them", () => {
  const col = (type: string, jsonPath: string) => ({ name: type, type, jsonPath });
  assertEquals(
    cells([
      col("integer", ".spec.replicas"),
      col("integer", ".spec.ratio"),
      col("number", ".spec.ratio"),
      col("boolean", ".spec.on"),
      col("string", ".spec.replicas"),
      col("string", ".spec.big"),
      col("string", ".spec.zones"),
      col("string", ".spec.labels"),
      col("string", ".spec.items[*].name"),
      col("date", ".metadata.creationTimestamp"),
      col("date", ".spec.when"),
    ]),
    [3, 0, 0.25, true, "3", "1e+21", '["a","b"]', '{"x":"1"}', "first", "5m", "<invalid>"],
  );
});

Deno.test("printer columns: missing values and values of another type have no cell", () => {
  assertEquals(
    cells([
      { name: "a", type: "string", jsonPath: ".spec.missing" },
      { name: "b", type: "integer", jsonPath: ".spec.on" },
      { name: "c", type: "boolean", jsonPath: ".spec.replicas" },
      { name: "d", type: "date", jsonPath: ".spec.replicas" },
      { name: "e", type: "string", jsonPath: ".spec.zones[5]" },
    ]),
    [undefined, undefined, undefined, undefined, undefined],
  );
});

Deno.test("printer columns: definitions, priority and format; the default Age column", () => {
  const [col] = printerColumns([
    { name: "Big", type: "integer", format: "int64", priority: 2, jsonPath: ".spec.replicas" },
  ]);
  assertEquals([col.name, col.type, col.format, col.priority, col.description], [
    "Big",
    "integer",
    "int64",
    2,
    "Custom resource definition column (in JSONPath format): .spec.replicas",
  ]);
  const [age, ...rest] = printerColumns(undefined, NOW);
  assertEquals(rest, []);
  assertEquals([age.name, age.type, age.priority, age.value(obj)], ["Age", "date", 0, "5m"]);
  assertEquals(age.description?.startsWith("CreationTimestamp is a timestamp"), true);
});

Deno.test("printer columns: a path that does not parse ends the columns", () => {
  const cols = printerColumns([
    { name: "a", type: "string", jsonPath: ".spec.when" },
    { name: "b", type: "string", jsonPath: ".spec[" },
    { name: "c", type: "string", jsonPath: ".spec.when" },
  ]);
  assertEquals(cols.map((c) => c.name), ["a"]);
});

Deno.test("printer columns: CRD validation in kube's words", () => {
  const at = "spec.versions[0].additionalPrinterColumns";
  assertEquals(
    validatePrinterColumns([
      { name: "a", type: "float", jsonPath: ".spec.a" },
      { name: "b", type: "string", format: "uuid", jsonPath: "spec.b" },
      { name: "c", type: "date", format: "date-time", jsonPath: ".metadata.creationTimestamp" },
    ], at).map(fieldErrorMessage),
    [
      `${at}[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string`,
      `${at}[1].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password`,
      `${at}[1].JSONPath: Invalid value: "spec.b": must be a simple json path starting with .`,
    ],
  );
});
