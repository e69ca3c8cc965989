/**
 * A CustomResourceDefinition version's validation rules (`x-kubernetes-validations`), compiled
 * once per schema: the write-time errors of the CRD (a rule that does not compile, a message
 * that cannot be shown, an estimated cost over the limits) and a validator for the custom
 * resources (rule_evaluation.ts). Messages and paths are Kubernetes' (apiextensions-apiserver
 * `pkg/apis/apiextensions/validation` and `pkg/apiserver/schema/cel`):
 * `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule:
 * Invalid value: {...}: compilation failed: ERROR: <input>:1:6: undefined field 'x' ...`.
 *
 * Rules may sit on any node of the schema's structural spine (properties, items,
 * additionalProperties); inside `allOf`, `anyOf`, `oneOf` and `not` they are refused.
 * `self` is typed from the node (rule_types.ts), `oldSelf` likewise (an optional of it with
 * `optionalOldSelf: true`); `oldSelf` may only be used where an old value can be found: not
 * under lists other than `x-kubernetes-list-type: map`.
 */

import type { FieldError } from "../api/mod.ts";
import {
  CelCompileError,
  type CheckedExpression,
  compile,
  optionalOf,
  type Type,
  typeName,
} from "../cel/mod.ts";
import { ruleFieldPath } from "./rule_field_path.ts";
import { declType, maxCardinality } from "./rule_types.ts";
import { type RuleNode, validateRules } from "./rule_evaluation.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** Kubernetes' per-expression limit on the estimated cost (times the rule's cardinality). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Kubernetes' limit on the estimated cost of all rules of one schema. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

const REASONS = [
  "FieldValueDuplicate",
  "FieldValueForbidden",
  "FieldValueInvalid",
  "FieldValueRequired",
];
const NEWLINES = /[\n\r]+/;

/** One compiled rule of a schema node. */
export interface CompiledRule {
  /** The rule as written (its `rule` trimmed for messages). */
  readonly source: Json;
  readonly program?: CheckedExpression;
  readonly messageExpression?: CheckedExpression;
  readonly usesOldSelf: boolean;
  readonly optionalOldSelf: boolean;
  /** Where a failure is reported, relative to the node (normalized `fieldPath`). */
  readonly fieldPath?: string;
}

/** What {@link compileRules} gives for one version's schema. */
export interface CompiledRules {
  /** Why the CRD cannot be stored with these rules (empty when it can). */
  errors: FieldError[];
  /** Checks a custom resource (with its stored form on update); undefined without rules. */
  validate?: (obj: unknown, old?: unknown) => RuleResult;
}

/** Errors refuse the write; warnings are returned (failed rules on unchanged values). */
export interface RuleResult {
  errors: FieldError[];
  warnings: string[];
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

interface WalkState {
  path: string;
  isResourceRoot: boolean;
  /** How many values this node can have in one object; undefined when unbounded. */
  cardinality: number | undefined;
  /** The list above whose items cannot be correlated with old ones, if any. */
  uncorrelatable?: string;
}

/** A rule's estimated cost, for the per-schema total. */
interface Observed {
  path: string;
  cost: number;
}

/**
 * Compiles the validation rules of `openAPIV3Schema` (at `fieldPath`, e.g.
 * `spec.versions[0].schema.openAPIV3Schema`). Call once per CRD version, after the schema
 * was found structural.
 */
export function compileRules(openAPIV3Schema: unknown, fieldPath: string): CompiledRules {
  const errors: FieldError[] = [];
  const costs: Observed[] = [];
  const root = walk(
    openAPIV3Schema,
    {
      path: fieldPath,
      isResourceRoot: true,
      cardinality: 1,
    },
    errors,
    costs,
  );
  const total = costs.reduce((n, c) => n + c.cost, 0);
  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    const expensive = [...costs].sort((a, b) => b.cost - a.cost).slice(0, 4);
    for (const e of expensive) {
      errors.push({
        type: "Forbidden",
        field: e.path,
        detail:
          "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
      });
    }
    errors.push({
      type: "Forbidden",
      field: fieldPath,
      detail: costErrorMessage(
        "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
        total,
        STATIC_ESTIMATED_CRD_COST_LIMIT,
      ),
    });
  }
  if (root === undefined || errors.length) return { errors };
  return { errors, validate: (obj, old) => validateRules(root, obj, old) };
}

function walk(
  s: unknown,
  state: WalkState,
  errors: FieldError[],
  costs: Observed[],
): RuleNode | undefined {
  if (!isObject(s)) return undefined;
  const rules = Array.isArray(s["x-kubernetes-validations"]) ? s["x-kubernetes-validations"] : [];
  const decl = declType(s, state.isResourceRoot);
  for (const junctor of ["allOf", "anyOf", "oneOf", "not"]) {
    forbidInJunctor(s[junctor], `${state.path}.${junctor}`, errors);
  }

  const node: RuleNode = {
    rules: [],
    type: decl?.type,
    schemaType: typeof s.type === "string" ? s.type : "",
  };
  if (rules.length && decl !== undefined) {
    const cardinality = state.cardinality ?? maxCardinality(decl.minSize);
    node.rules = compileNodeRules(s, rules, decl.type, { ...state, cardinality }, errors, costs);
    if (Array.isArray(s.required) && s.required.length) node.required = s.required;
  }

  const props = isObject(s.properties) ? s.properties : {};
  for (const [name, sub] of Object.entries(props)) {
    const child = walk(
      sub,
      {
        ...state,
        path: `${state.path}.properties[${name}]`,
        isResourceRoot: isObject(sub) && sub["x-kubernetes-embedded-resource"] === true,
      },
      errors,
      costs,
    );
    if (child) (node.properties ??= new Map()).set(name, child);
  }
  const bound = (max: unknown) =>
    state.cardinality !== undefined && typeof max === "number" && max >= 0
      ? state.cardinality * max
      : undefined;
  if (isObject(s.additionalProperties)) {
    const extra = s.additionalProperties;
    node.additionalProperties = walk(
      extra,
      {
        ...state,
        path: `${state.path}.additionalProperties`,
        isResourceRoot: extra["x-kubernetes-embedded-resource"] === true,
        cardinality: bound(s.maxProperties),
      },
      errors,
      costs,
    );
  }
  if (isObject(s.items)) {
    const listType = s["x-kubernetes-list-type"];
    node.items = walk(
      s.items,
      {
        path: `${state.path}.items`,
        isResourceRoot: s.items["x-kubernetes-embedded-resource"] === true,
        cardinality: bound(s.maxItems),
        uncorrelatable: listType === "map"
          ? state.uncorrelatable
          : state.uncorrelatable ?? state.path,
      },
      errors,
      costs,
    );
    if (listType === "map" && Array.isArray(s["x-kubernetes-list-map-keys"])) {
      node.mapKeys = s["x-kubernetes-list-map-keys"];
    }
  }
  const used = node.rules.length || node.properties?.size || node.additionalProperties ||
    node.items;
  return used ? node : undefined;
}

function forbidInJunctor(value: unknown, path: string, errors: FieldError[]): void {
  const visit = (s: unknown, at: string) => {
    if (!isObject(s)) return;
    if (s["x-kubernetes-validations"] !== undefined) {
      errors.push({
        type: "Forbidden",
        field: `${at}.x-kubernetes-validations`,
        detail: "must be empty to be structural",
      });
    }
    for (const [k, v] of Object.entries(isObject(s.properties) ? s.properties : {})) {
      visit(v, `${at}.properties[${k}]`);
    }
    visit(s.items, `${at}.items`);
    visit(s.additionalProperties, `${at}.additionalProperties`);
    for (const junctor of ["allOf", "anyOf", "oneOf"]) {
      if (Array.isArray(s[junctor])) {
        s[junctor].forEach((sub: unknown, i: number) => visit(sub, `${at}.${junctor}[${i}]`));
      }
    }
    visit(s.not, `${at}.not`);
  };
  if (Array.isArray(value)) value.forEach((s, i) => visit(s, `${path}[${i}]`));
  else visit(value, path);
}

function compileNodeRules(
  s: Record<string, Json>,
  rules: Json[],
  self: Type,
  state: WalkState & { cardinality: number },
  errors: FieldError[],
  costs: Observed[],
): CompiledRule[] {
  const compiled: CompiledRule[] = [];
  rules.forEach((rule: Json, i: number) => {
    const at = `${state.path}.x-kubernetes-validations[${i}]`;
    if (!isObject(rule)) return;
    const before = errors.length;
    checkRuleFields(s, rule, at, errors);
    if (errors.length > before) return;
    const text = String(rule.rule).trim();
    const optionalOldSelf = rule.optionalOldSelf === true;
    const types = { self, oldSelf: optionalOldSelf ? optionalOf(self) : self };
    let program: CheckedExpression;
    try {
      program = compile("crdRule", text, { expect: "bool", types });
    } catch (err) {
      errors.push({
        type: "Invalid",
        field: `${at}.rule`,
        value: rule,
        detail: (err as Error).message.startsWith("expression must evaluate to")
          ? "cel expression must evaluate to a bool"
          : `compilation failed: ${compileErrorText(text, err)}`,
      });
      return;
    }
    if (program.resultType.kind !== "scalar") {
      errors.push({
        type: "Invalid",
        field: `${at}.rule`,
        value: rule,
        detail: "cel expression must evaluate to a bool",
      });
      return;
    }
    const cost = program.estimatedCost * state.cardinality;
    if (cost > STATIC_ESTIMATED_COST_LIMIT) {
      errors.push({
        type: "Forbidden",
        field: `${at}.rule`,
        detail: costErrorMessage("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT),
      });
    }
    costs.push({ path: `${at}.rule`, cost });
    const usesOldSelf = program.usesVariable("oldSelf");
    if (usesOldSelf && state.uncorrelatable !== undefined) {
      errors.push({
        type: "Invalid",
        field: `${at}.rule`,
        value: rule.rule,
        detail:
          `oldSelf cannot be used on the uncorrelatable portion of the schema within ${state.uncorrelatable}`,
      });
    } else if (
      !usesOldSelf && rule.optionalOldSelf !== undefined && rule.optionalOldSelf !== null
    ) {
      errors.push({
        type: "Invalid",
        field: `${at}.optionalOldSelf`,
        value: rule.optionalOldSelf,
        detail: "may not be set if oldSelf is not used in rule",
      });
    }
    const messageExpression = compileMessageExpression(rule, types, at, state, errors, costs);
    compiled.push({
      source: rule,
      program,
      messageExpression,
      usesOldSelf,
      optionalOldSelf,
      fieldPath: typeof rule.fieldPath === "string" && rule.fieldPath
        ? ruleFieldPath(rule.fieldPath, s)
        : undefined,
    });
  });
  return compiled;
}

function compileMessageExpression(
  rule: Json,
  types: Record<string, Type>,
  at: string,
  state: WalkState & { cardinality: number },
  errors: FieldError[],
  costs: Observed[],
): CheckedExpression | undefined {
  const text = typeof rule.messageExpression === "string" ? rule.messageExpression.trim() : "";
  if (!text) return undefined;
  const field = `${at}.messageExpression`;
  let program: CheckedExpression;
  try {
    program = compile("crdRule", text, { expect: "string", types });
  } catch (err) {
    errors.push({
      type: "Invalid",
      field,
      value: rule,
      detail: (err as Error).message.startsWith("expression must evaluate to")
        ? "messageExpression must evaluate to a string"
        : `messageExpression compilation failed: ${compileErrorText(text, err)}`,
    });
    return undefined;
  }
  if (typeName(program.resultType) !== "string") {
    errors.push({
      type: "Invalid",
      field,
      value: rule,
      detail: "messageExpression must evaluate to a string",
    });
    return undefined;
  }
  const cost = program.estimatedCost * state.cardinality;
  if (cost > STATIC_ESTIMATED_COST_LIMIT) {
    errors.push({
      type: "Forbidden",
      field,
      detail: costErrorMessage(
        "estimated messageExpression cost",
        cost,
        STATIC_ESTIMATED_COST_LIMIT,
      ),
    });
  }
  costs.push({ path: field, cost });
  return program;
}

/** The checks of a rule's fields that need no compiling, as Kubernetes orders them. */
function checkRuleFields(s: Json, rule: Json, at: string, errors: FieldError[]): void {
  const text = typeof rule.rule === "string" ? rule.rule.trim() : "";
  const message = typeof rule.message === "string" ? rule.message : "";
  if (!text) {
    errors.push({ type: "Required", field: `${at}.rule`, detail: "rule is not specified" });
  } else if (message.length > 0 && message.trim().length === 0) {
    errors.push({
      type: "Invalid",
      field: `${at}.message`,
      value: message,
      detail: "must be non-empty if specified",
    });
  } else if (NEWLINES.test(message.trim())) {
    errors.push({
      type: "Invalid",
      field: `${at}.message`,
      value: message,
      detail: "must not contain line breaks",
    });
  } else if (NEWLINES.test(text) && message.trim().length === 0) {
    errors.push({
      type: "Required",
      field: `${at}.message`,
      detail: "message must be specified if rule contains line breaks",
    });
  }
  const messageExpression = rule.messageExpression;
  if (typeof messageExpression === "string" && messageExpression && !messageExpression.trim()) {
    errors.push({
      type: "Required",
      field: `${at}.messageExpression`,
      detail: "messageExpression must be non-empty if specified",
    });
  }
  if (rule.reason !== undefined && rule.reason !== null && !REASONS.includes(rule.reason)) {
    errors.push({
      type: "NotSupported",
      field: `${at}.reason`,
      value: rule.reason,
      detail: `supported values: ${REASONS.map((r) => JSON.stringify(r)).join(", ")}`,
    });
  }
  const fieldPath = rule.fieldPath;
  if (typeof fieldPath === "string" && fieldPath) {
    if (!fieldPath.trim()) {
      errors.push({
        type: "Invalid",
        field: `${at}.fieldPath`,
        value: fieldPath,
        detail: "must be non-empty if specified",
      });
    }
    if (NEWLINES.test(fieldPath)) {
      errors.push({
        type: "Invalid",
        field: `${at}.fieldPath`,
        value: fieldPath,
        detail: "must not contain line breaks",
      });
    }
    try {
      ruleFieldPath(fieldPath, s);
    } catch {
      errors.push({
        type: "Invalid",
        field: `${at}.fieldPath`,
        value: fieldPath,
        detail: "must be a valid path",
      });
    }
  }
}

/** cel-go's rendering of a compile error: `ERROR: <input>:1:6: msg`, the line, a caret. */
function compileErrorText(source: string, err: unknown): string {
  if (!(err instanceof CelCompileError)) return `ERROR: <input>: ${(err as Error).message}`;
  const p = err.position;
  if (p === undefined) return `ERROR: <input>: ${err.message}`;
  const line = source.split("\n")[p.line - 1] ?? "";
  return `ERROR: <input>:${p.line}:${p.column}: ${err.message}\n | ${line}\n | ${
    ".".repeat(p.column - 1)
  }^`;
}

/** Kubernetes' words for an estimated cost over its limit. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100
    ? "more than 100x"
    : factor < 1.5
    ? `${factor.toFixed(6)}x`
    : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/**
 * The rule check of a served version, for its strategy: compiled here once, then run on every
 * create and update (main resource and status). Warnings (ratcheted failures) go to
 * `warnings` when given. Undefined when the schema has no rules.
 */
export function customResourceRules(
  openAPIV3Schema: unknown,
): ((obj: unknown, old: unknown, warnings?: string[]) => FieldError[]) | undefined {
  const { validate } = compileRules(openAPIV3Schema, "");
  if (!validate) return undefined;
  return (obj, old, warnings) => {
    const result = validate(obj, old);
    warnings?.push(...result.warnings);
    return result.errors;
  };
}
