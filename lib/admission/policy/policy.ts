/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding as the evaluator uses them:
 * read once from their stored objects, selectors parsed, every expression compiled in the
 * `admissionPolicy` CEL environment (`object`, `oldObject`, `request`, `params`, `namespaceObject`,
 * `variables`, `authorizer`). An expression that does not compile (refused at write time;
 * an old stored object could still hold one) is kept as an error that failurePolicy decides.
 */

import type { KubeObject, LabelSelector } from "../../api/mod.ts";
import { compile, type CompiledExpression } from "../../cel/mod.ts";
import type { Rule } from "../webhook/rules.ts";
import { selectorOf } from "../webhook/webhook.ts";

/** A rule with the names it is limited to (`NamedRuleWithOperations`). */
export interface NamedRule extends Rule {
  resourceNames?: string[];
}

/** `matchConstraints` of a policy, or `matchResources` of a binding. */
export interface MatchResources {
  rules: NamedRule[];
  excludeRules: NamedRule[];
  matchPolicy: "Exact" | "Equivalent";
  namespaceSelector: LabelSelector | Error;
  objectSelector: LabelSelector | Error;
}

export type Compiled = CompiledExpression | Error;

export interface Validation {
  expression: Compiled;
  text: string;
  message?: string;
  messageExpression?: Compiled;
  reason: string;
}

export interface Policy {
  name: string;
  failurePolicy: "Fail" | "Ignore";
  paramKind?: { apiVersion: string; kind: string };
  matchConstraints: MatchResources;
  matchConditions: { name: string; expression: Compiled }[];
  variables: { name: string; expression: Compiled }[];
  validations: Validation[];
  auditAnnotations: { key: string; valueExpression: Compiled }[];
}

export interface Binding {
  name: string;
  policyName: string;
  paramRef?: {
    name?: string;
    namespace?: string;
    selector?: LabelSelector | Error;
    parameterNotFoundAction: "Allow" | "Deny";
  };
  /** Narrows the policy's constraints; absent: all the policy matches. */
  matchResources?: MatchResources;
  validationActions: string[];
}

function compiled(expression: unknown, expect: "bool" | "string" | "any"): Compiled {
  try {
    return compile("admissionPolicy", String(expression ?? ""), { expect, authorizer: true });
  } catch (err) {
    return err as Error;
  }
}

function matchResourcesOf(m: KubeObject | undefined): MatchResources {
  return {
    rules: Array.isArray(m?.resourceRules) ? m.resourceRules : [],
    excludeRules: Array.isArray(m?.excludeResourceRules) ? m.excludeResourceRules : [],
    matchPolicy: m?.matchPolicy === "Exact" ? "Exact" : "Equivalent",
    namespaceSelector: selectorOf(m?.namespaceSelector),
    objectSelector: selectorOf(m?.objectSelector),
  };
}

const list = (v: unknown): KubeObject[] => Array.isArray(v) ? v : [];

export function policyOf(obj: KubeObject): Policy {
  const spec = obj.spec ?? {};
  return {
    name: String(obj.metadata?.name ?? ""),
    failurePolicy: spec.failurePolicy === "Ignore" ? "Ignore" : "Fail",
    paramKind: spec.paramKind?.kind ? spec.paramKind : undefined,
    matchConstraints: matchResourcesOf(spec.matchConstraints),
    matchConditions: list(spec.matchConditions).map((c) => ({
      name: String(c.name ?? ""),
      expression: compiled(c.expression, "bool"),
    })),
    variables: list(spec.variables).map((v) => ({
      name: String(v.name ?? ""),
      expression: compiled(v.expression, "any"),
    })),
    validations: list(spec.validations).map((v) => ({
      expression: compiled(v.expression, "bool"),
      text: String(v.expression ?? ""),
      message: typeof v.message === "string" && v.message ? v.message : undefined,
      messageExpression: typeof v.messageExpression === "string" && v.messageExpression
        ? compiled(v.messageExpression, "string")
        : undefined,
      reason: typeof v.reason === "string" && v.reason ? v.reason : "Invalid",
    })),
    auditAnnotations: list(spec.auditAnnotations).map((a) => ({
      key: String(a.key ?? ""),
      valueExpression: compiled(a.valueExpression, "any"),
    })),
  };
}

export function bindingOf(obj: KubeObject): Binding {
  const spec = obj.spec ?? {};
  const ref = spec.paramRef;
  return {
    name: String(obj.metadata?.name ?? ""),
    policyName: String(spec.policyName ?? ""),
    paramRef: ref
      ? {
        name: typeof ref.name === "string" ? ref.name : undefined,
        namespace: typeof ref.namespace === "string" ? ref.namespace : undefined,
        selector: ref.selector ? selectorOf(ref.selector) : undefined,
        parameterNotFoundAction: ref.parameterNotFoundAction === "Allow" ? "Allow" : "Deny",
      }
      : undefined,
    matchResources: spec.matchResources ? matchResourcesOf(spec.matchResources) : undefined,
    validationActions: Array.isArray(spec.validationActions) ? spec.validationActions : [],
  };
}
