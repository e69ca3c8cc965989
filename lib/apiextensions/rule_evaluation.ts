/**
 * Running a CRD's compiled validation rules over a custom resource, as Kubernetes does
 * (apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`): every non-null value
 * with rules is checked, `oldSelf` is the old value at the same place when one can be found
 * (object fields by name, map entries by key, items of `map` lists by their keys; never items of
 * other lists), and transition rules (those naming `oldSelf`) run only when there is one,
 * unless they set `optionalOldSelf`. Each evaluation may cost at most
 * {@link PER_CALL_LIMIT}, all of one object's at most {@link RUNTIME_COST_BUDGET}.
 *
 * A failed rule that does not name `oldSelf`, on a value that did not change, is ratcheted:
 * it comes back as a warning instead of refusing the update (kube's CRDValidationRatcheting).
 */

import { type FieldError, fieldErrorMessage } from "../api/mod.ts";
import {
  CelEvaluationError,
  type Prepared,
  prepareOptional,
  prepareValue,
  type Type,
} from "../cel/mod.ts";
import { childPath } from "./rule_field_path.ts";
import type { CompiledRule, RuleResult } from "./validation_rules.ts";

/** Kubernetes' cost limit of one rule evaluation. */
export const PER_CALL_LIMIT = 1_000_000;
/** Kubernetes' cost budget of all rule evaluations for one object. */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** The longest message a messageExpression may produce. */
const MAX_MESSAGE_BYTES = 5 * 1024;

const NOT_CHECKED =
  "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";
const OUT_OF_BUDGET =
  "validation failed due to running out of cost budget, no further validation rules will be run";

/** The compiled rules of a schema node and of the nodes below it. */
export interface RuleNode {
  rules: CompiledRule[];
  /** The type of `self` here (undefined when rules cannot see the value). */
  type?: Type;
  /** The node's `type` as written, shown as the invalid value of a failed rule. */
  schemaType: string;
  properties?: Map<string, RuleNode>;
  additionalProperties?: RuleNode;
  items?: RuleNode;
  /** `x-kubernetes-list-map-keys` of a map list: how old items are found. */
  mapKeys?: string[];
  /** The node's `required` properties: rules do not run while one is missing. */
  required?: string[];
}

// deno-lint-ignore no-explicit-any
type Json = any;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

class Run {
  errors: FieldError[] = [];
  warnings: string[] = [];
  remaining = RUNTIME_COST_BUDGET;
  stopped = false;
  notChecked = false;

  fail(e: FieldError, ratchet: boolean): void {
    if (ratchet) this.warnings.push(fieldErrorMessage(e));
    else this.errors.push(e);
  }

  stop(path: string, schemaType: string, detail: string): void {
    this.errors.push({ type: "Invalid", field: shown(path), value: schemaType, detail });
    this.stopped = true;
  }
}

/** Kubernetes prints the root of a custom resource's field paths as `<nil>`. */
const shown = (path: string) => path || "<nil>";

/** Checks `obj` (with `old`, its stored form, on update) against the rules of `root`. */
export function validateRules(root: RuleNode, obj: unknown, old?: unknown): RuleResult {
  const run = new Run();
  visit(run, root, obj, old, "", old !== undefined && sameJson(obj, old));
  if (run.notChecked) {
    run.errors.push({ type: "Invalid", field: "<nil>", value: "null", detail: NOT_CHECKED });
  }
  return { errors: run.errors, warnings: run.warnings };
}

/**
 * `parentUnchanged`: the nearest value above that has an old value is equal to it (what
 * ratchets the nodes that have no old value of their own).
 */
function visit(
  run: Run,
  node: RuleNode,
  value: unknown,
  old: unknown,
  path: string,
  parentUnchanged: boolean,
): void {
  if (value === null || value === undefined || run.stopped) return;
  const unchanged = old !== undefined ? sameJson(value, old) : parentUnchanged;
  if (node.rules.length && node.type !== undefined) {
    evaluateNode(run, node, node.type, value, old, path, unchanged);
  }
  if (run.stopped) return;
  if (Array.isArray(value)) {
    if (!node.items) return;
    const olds = Array.isArray(old) && node.mapKeys ? indexByKeys(old, node.mapKeys) : undefined;
    value.forEach((item, i) => {
      const oldItem = olds?.get(itemKey(item, node.mapKeys!));
      visit(run, node.items!, item, oldItem, `${path}[${i}]`, unchanged);
    });
    return;
  }
  if (!isObject(value)) return;
  const oldMap = isObject(old) ? old : undefined;
  for (const [key, v] of Object.entries(value)) {
    const sub = node.properties?.get(key);
    if (sub) visit(run, sub, v, oldMap?.[key], childPath(path, key), unchanged);
    else if (node.additionalProperties) {
      visit(run, node.additionalProperties, v, oldMap?.[key], `${path}[${key}]`, unchanged);
    }
    if (run.stopped) return;
  }
}

function evaluateNode(
  run: Run,
  node: RuleNode,
  type: Type,
  value: unknown,
  old: unknown,
  path: string,
  unchanged: boolean,
): void {
  const missing = node.required?.some((k) => isObject(value) && value[k] === undefined);
  const self = prepareValue(value, type);
  if (missing || self.mismatches.length) {
    // The schema's own errors (wrong type, Required) say what is wrong; rules would only fail
    // confusingly.
    run.notChecked = true;
    return;
  }
  let oldSelf: Prepared | undefined;
  for (const rule of node.rules) {
    if (!rule.program) continue;
    if (rule.usesOldSelf && old === undefined && !rule.optionalOldSelf) continue;
    if (rule.usesOldSelf && old !== undefined) oldSelf ??= prepareValue(old, type);
    const variables = {
      self: self.value,
      oldSelf: rule.optionalOldSelf ? prepareOptional(oldSelf) : oldSelf?.value ?? null,
    };
    const text = ruleText(rule.source);
    let passed: boolean;
    const budget = run.remaining;
    if (budget <= 0) return run.stop(path, node.schemaType, OUT_OF_BUDGET);
    try {
      const result = rule.program.evaluateWithCost(variables, { costLimit: budget });
      run.remaining -= result.cost;
      passed = result.value === true;
    } catch (caught) {
      // Anything else thrown is reported as the rule's failure, never as a 500.
      const err = caught instanceof CelEvaluationError
        ? caught
        : new CelEvaluationError((caught as Error).message);
      run.remaining -= err.cost;
      if (err.costExceeded) {
        run.stop(
          path,
          node.schemaType,
          budget < PER_CALL_LIMIT
            ? OUT_OF_BUDGET
            : `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${text}`,
        );
        return;
      }
      run.errors.push({
        type: "Invalid",
        field: shown(path),
        value: node.schemaType,
        detail: runtimeErrorText(err.message, text),
      });
      continue;
    }
    if (passed) continue;
    const where = rule.fieldPath ? childPath(path, rule.fieldPath) : path;
    const detail = failureMessage(run, rule, variables, where, node.schemaType) ??
      defaultMessage(rule.source);
    if (run.stopped) return;
    run.fail(
      errorForReason(shown(where), node.schemaType, detail, rule.source.reason),
      unchanged && !rule.usesOldSelf,
    );
  }
}

/** The message of a failed rule from its messageExpression, when that gives one. */
function failureMessage(
  run: Run,
  rule: CompiledRule,
  variables: Record<string, unknown>,
  where: string,
  schemaType: string,
): string | undefined {
  if (!rule.messageExpression) return undefined;
  try {
    const result = rule.messageExpression.evaluateWithCost(variables, {
      costLimit: run.remaining,
    });
    run.remaining -= result.cost;
    const message = String(result.value).trim();
    const ok = message.length > 0 && !/\n/.test(message) &&
      new TextEncoder().encode(message).length <= MAX_MESSAGE_BYTES;
    return ok ? message : undefined;
  } catch (caught) {
    const err = caught instanceof CelEvaluationError
      ? caught
      : new CelEvaluationError((caught as Error).message);
    run.remaining -= err.cost;
    if (err.costExceeded) {
      const source = String(rule.source.messageExpression).trim();
      run.stop(
        where,
        schemaType,
        err.cost < PER_CALL_LIMIT
          ? "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
          : `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${
            JSON.stringify(source)
          }`,
      );
    }
    return undefined;
  }
}

function ruleText(rule: Json): string {
  const message = typeof rule.message === "string" ? rule.message.trim() : "";
  return message || String(rule.rule).trim();
}

function defaultMessage(rule: Json): string {
  const message = typeof rule.message === "string" ? rule.message.trim() : "";
  return message || `failed rule: ${String(rule.rule).trim()}`;
}

/** An evaluation error in Kubernetes' words (cel-go's "no such key", "no such overload"). */
function runtimeErrorText(message: string, rule: string): string {
  const bare = message.replace(/ \(line \d+, column \d+\)$/, "")
    .replace(/^field not found: /, "no such key: ");
  if (bare.startsWith("found no matching overload")) {
    return `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${rule}`;
  }
  return `${bare} evaluating rule: ${rule}`;
}

function errorForReason(
  field: string,
  schemaType: string,
  detail: string,
  reason: unknown,
): FieldError {
  switch (reason) {
    case "FieldValueForbidden":
      return { type: "Forbidden", field, detail };
    case "FieldValueRequired":
      return { type: "Required", field, detail };
    case "FieldValueDuplicate":
      return { type: "Duplicate", field, value: schemaType };
    default:
      return { type: "Invalid", field, value: schemaType, detail };
  }
}

function itemKey(item: unknown, keys: string[]): string {
  return JSON.stringify(keys.map((k) => (isObject(item) ? item[k] : undefined) ?? null));
}

function indexByKeys(items: unknown[], keys: string[]): Map<string, unknown> {
  return new Map(items.map((item) => [itemKey(item, keys), item]));
}

/** Deep equality of two JSON values (key order does not matter). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return typeof a === "bigint" || typeof b === "bigint" ? String(a) === String(b) : false;
}
