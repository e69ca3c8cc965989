/** The public surface of lib/schema/ (lib/README.md). */
export {
  compilePattern,
  REF_PREFIX,
  type SchemaNode,
  SchemaSet,
  type ValidationResult,
} from "./schema_set.ts";
export { type FieldType, typeOf, UNTYPED } from "./typed.ts";
