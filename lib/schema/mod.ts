/** The public surface of lib/schema/ (lib/README.md). */
export { SchemaSet, type ValidationResult } from "./schema_set.ts";
export { REF_PREFIX, type SchemaNode } from "./schema_node.ts";
export { compilePattern } from "./formats.ts";
export { type FieldType, typeOf, UNTYPED } from "./typed.ts";
