/**
 * Type checking of a ValidatingAdmissionPolicy (kube's `status.typeChecking`): each expression
 * is compiled once more for each kind the policy's rules name exactly, with `object` and
 * `oldObject` typed from that kind's schema instead of dynamic. An expression that names a field
 * the kind does not have, or uses a value as another type, gets a warning; the policy itself
 * stays in force (the expressions compiled when it was written). Rules with wildcards, and kinds
 * without a known schema, are not checked.
 */

import type { KubeObject } from "../../api/mod.ts";
import {
  BOOL,
  compile,
  DOUBLE,
  DYN,
  INT,
  listOf,
  mapOf,
  object,
  STRING,
  type Type,
} from "../../cel/mod.ts";
import { REF_PREFIX, type SchemaNode, type SchemaSet } from "../../schema/mod.ts";

/** A kind a rule names: its apiVersion and kind, and its schema's name in `schemas`. */
export interface CheckedKind {
  apiVersion: string;
  kind: string;
  schema: string;
}

/** Finds the kind of `group`/`version`/`resource`; undefined when it is not served. */
export type KindResolver = (group: string, version: string, resource: string) =>
  | CheckedKind
  | undefined;

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** The `status.typeChecking` of a policy. */
export function typeCheckPolicy(
  policy: KubeObject,
  schemas: SchemaSet,
  resolve: KindResolver,
): { expressionWarnings: ExpressionWarning[] } {
  const spec = policy.spec ?? {};
  const kinds = matchedKinds(spec.matchConstraints, resolve).filter((k) => schemas.has(k.schema));
  const warnings: ExpressionWarning[] = [];
  if (!kinds.length) return { expressionWarnings: warnings };
  const types = kinds.map((k) => ({
    kind: k,
    type: schemaType(schemas, { $ref: `${REF_PREFIX}${k.schema}` }),
  }));
  const check = (fieldRef: string, expression: unknown, expect: "bool" | "string" | "any") => {
    if (typeof expression !== "string" || !expression) return;
    const problems: string[] = [];
    for (const { kind, type } of types) {
      try {
        compile("admissionPolicy", expression, {
          expect,
          authorizer: true,
          types: { object: type, oldObject: type },
        });
      } catch (err) {
        problems.push(`${kind.apiVersion}, Kind=${kind.kind}: ERROR: ${(err as Error).message}`);
      }
    }
    if (problems.length) warnings.push({ fieldRef, warning: problems.join("\n") });
  };
  const list = (v: unknown): KubeObject[] => Array.isArray(v) ? v : [];
  list(spec.matchConditions).forEach((c, i) =>
    check(`spec.matchConditions[${i}].expression`, c?.expression, "bool")
  );
  list(spec.variables).forEach((v, i) =>
    check(`spec.variables[${i}].expression`, v?.expression, "any")
  );
  list(spec.validations).forEach((v, i) => {
    check(`spec.validations[${i}].expression`, v?.expression, "bool");
    check(`spec.validations[${i}].messageExpression`, v?.messageExpression, "string");
  });
  list(spec.auditAnnotations).forEach((a, i) =>
    check(`spec.auditAnnotations[${i}].valueExpression`, a?.valueExpression, "any")
  );
  return { expressionWarnings: warnings };
}

/** The kinds the rules name without wildcards. */
function matchedKinds(constraints: KubeObject | undefined, resolve: KindResolver): CheckedKind[] {
  const out = new Map<string, CheckedKind>();
  for (const rule of Array.isArray(constraints?.resourceRules) ? constraints.resourceRules : []) {
    const groups: string[] = rule?.apiGroups ?? [];
    const versions: string[] = rule?.apiVersions ?? [];
    const resources: string[] = rule?.resources ?? [];
    if ([...groups, ...versions, ...resources].some((x) => x.includes("*"))) continue;
    for (const g of groups) {
      for (const v of versions) {
        for (const r of resources) {
          const kind = resolve(g, v, r.split("/")[0]);
          if (kind) out.set(`${kind.apiVersion} ${kind.kind}`, kind);
        }
      }
    }
  }
  return [...out.values()];
}

/** How deep object types are spelled out; below, values are dynamic (schemas can recurse). */
const MAX_DEPTH = 12;

/** The CEL type of values a schema describes, as kube's CEL sees them. */
export function schemaType(schemas: SchemaSet, node: SchemaNode, depth = 0): Type {
  const refOf = node.$ref ?? node.allOf?.[0]?.$ref;
  const ref = typeof refOf === "string" ? refOf.split("/").at(-1)! : undefined;
  const n = schemas.resolve(node);
  if (depth > MAX_DEPTH) return DYN;
  // deno-lint-ignore no-explicit-any
  const ext = n as any;
  if (ext["x-kubernetes-int-or-string"] || ext["x-kubernetes-preserve-unknown-fields"]) return DYN;
  switch (n.type) {
    case "string":
      // Formatted strings (dates, bytes) stay strings: policies see objects as JSON.
      return STRING;
    case "integer":
      return INT;
    case "number":
      return DOUBLE;
    case "boolean":
      return BOOL;
    case "array":
      return listOf(n.items ? schemaType(schemas, n.items, depth + 1) : DYN);
    case "object":
    case undefined: {
      if (n.properties && Object.keys(n.properties).length) {
        const fields: Record<string, Type> = {};
        for (const [k, v] of Object.entries(n.properties)) {
          fields[k] = schemaType(schemas, v, depth + 1);
        }
        // apiVersion, kind and metadata are always there, typed or not.
        fields.apiVersion ??= STRING;
        fields.kind ??= STRING;
        return object(ref ?? "object", fields);
      }
      if (n.additionalProperties && typeof n.additionalProperties === "object") {
        return mapOf(STRING, schemaType(schemas, n.additionalProperties, depth + 1));
      }
      return DYN;
    }
    default:
      return DYN;
  }
}
