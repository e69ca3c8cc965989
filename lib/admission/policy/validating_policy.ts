/**
 * kube's ValidatingAdmissionPolicy plugin (validating phase): every binding whose policy and
 * match resources select the request evaluates the policy's CEL, once per parameter object:
 * match conditions, then variables, then validations. A failed validation is acted on as the
 * binding says: Deny (the request fails with the validation's reason), Warn (a warning for the
 * client), Audit (an audit annotation). An expression that errors follows the policy's
 * failurePolicy: Ignore skips it, Fail acts on it as on a failed validation.
 */

import { traced } from "../../tracing/mod.ts";
import { preparedInput } from "../../cel/mod.ts";
import {
  type KubeObject,
  type LabelSelector,
  type Logger,
  StatusError,
  type StatusReason,
} from "../../api/mod.ts";
import type { Authorizer } from "../../auth/mod.ts";
import type { AdmissionAttributes } from "../attributes.ts";
import { evaluateWithAuthorizer } from "../authorizer_checks.ts";
import type { AdmissionPlugin } from "../plugin.ts";
import {
  type EquivalentResource,
  type Matched,
  matchRules,
  matchSelectors,
} from "../webhook/matching.ts";
import { admissionRequest } from "../webhook/review.ts";
import type { Binding, Compiled, MatchResources, NamedRule, Policy } from "./policy.ts";

export const VALIDATING_ADMISSION_POLICY = "ValidatingAdmissionPolicy";

/** The audit annotation of Audit actions (kube's key). */
export const VALIDATION_FAILURE_ANNOTATION =
  "validation.policy.admission.k8s.io/validation_failure";

export interface PolicySource {
  /** The stored policies (by name) and bindings (in name order), current as of the call. */
  current(): Promise<{ policies: ReadonlyMap<string, Policy>; bindings: readonly Binding[] }>;
}

export interface PolicyEnvironment {
  source: PolicySource;
  namespace(name: string): Promise<KubeObject | undefined>;
  equivalents(resource: AdmissionAttributes["resource"]): readonly EquivalentResource[];
  /**
   * The parameter objects of `kind`: the one named `name` (in `namespace` when the kind is
   * namespaced), or those `selector` selects. Undefined: the kind is not served.
   */
  params(
    kind: { apiVersion: string; kind: string },
    query: { namespace: string; name?: string; selector?: LabelSelector },
  ): Promise<KubeObject[] | undefined>;
  authorizer?: Authorizer;
  logger: Logger;
}

export function validatingAdmissionPolicy(env: PolicyEnvironment): AdmissionPlugin {
  return {
    name: VALIDATING_ADMISSION_POLICY,
    operations: ["CREATE", "UPDATE", "DELETE", "CONNECT"],
    validate: (a) => validate(env, a),
  };
}

/** A failed validation (or an error under Fail) of one policy through one binding. */
interface Violation {
  message: string;
  reason: string;
}

async function validate(env: PolicyEnvironment, a: AdmissionAttributes): Promise<void> {
  const { policies, bindings } = await env.source.current();
  if (!bindings.length) return;
  const namespace = a.namespace ? await env.namespace(a.namespace) : undefined;
  const audits: KubeObject[] = [];
  for (const binding of bindings) {
    const policy = policies.get(binding.policyName);
    if (!policy) continue;
    const name = `ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}'`;
    let violations: Violation[];
    try {
      const matched = select(env, a, policy, binding, namespace);
      if (!matched) continue;
      // One span per policy and binding evaluated (a child of the request's when traced).
      violations = await traced(
        "Evaluate validating admission policy",
        {
          policy: policy.name,
          binding: binding.name,
          resource: a.resource.resource,
          operation: a.operation,
        },
        () => evaluate(env, a, policy, binding, matched, namespace),
      );
    } catch (err) {
      // A binding that cannot be configured (no params, bad selector): failurePolicy decides.
      if (policy.failurePolicy === "Ignore") {
        env.logger.warn(`admission: ${name}: ${(err as Error).message} (failurePolicy Ignore)`);
        continue;
      }
      violations = [{ message: (err as Error).message, reason: "Forbidden" }];
    }
    for (const [i, v] of violations.entries()) {
      if (binding.validationActions.includes("Warn")) {
        a.warnings.push(`Validation failed for ${name}: ${v.message}`);
      }
      if (binding.validationActions.includes("Audit")) {
        audits.push({
          message: v.message,
          policy: policy.name,
          binding: binding.name,
          expressionIndex: i,
          validationActions: binding.validationActions,
        });
      }
    }
    if (audits.length) a.auditAnnotations[VALIDATION_FAILURE_ANNOTATION] = JSON.stringify(audits);
    const denied = binding.validationActions.includes("Deny") ? violations[0] : undefined;
    if (denied) {
      const [code, reason] = STATUS_OF_REASON[denied.reason] ?? STATUS_OF_REASON.Invalid;
      throw new StatusError(code, reason, `${name} denied request: ${denied.message}`);
    }
  }
}

const STATUS_OF_REASON: Record<string, [number, StatusReason]> = {
  Unauthorized: [401, "Unauthorized"],
  Forbidden: [403, "Forbidden"],
  Invalid: [422, "Invalid"],
  RequestEntityTooLarge: [413, "RequestEntityTooLarge"],
};

/** Whether the policy's constraints and the binding's match resources select `a`. */
function select(
  env: PolicyEnvironment,
  a: AdmissionAttributes,
  policy: Policy,
  binding: Binding,
  namespace: KubeObject | undefined,
): Matched | undefined {
  const matched = matchResources(env, a, policy.matchConstraints, namespace);
  if (!matched) return undefined;
  // A binding's resource rules, when it has none, do not narrow the policy's.
  const narrowing = binding.matchResources;
  if (narrowing && !matchResources(env, a, narrowing, namespace, !narrowing.rules.length)) {
    return undefined;
  }
  return matched;
}

function matchResources(
  env: PolicyEnvironment,
  a: AdmissionAttributes,
  m: MatchResources,
  namespace: KubeObject | undefined,
  anyResource = false,
): Matched | undefined {
  const named = (rules: NamedRule[]) =>
    rules.filter((r) => !r.resourceNames?.length || r.resourceNames.includes(a.name));
  if (matchRules({ rules: named(m.excludeRules), matchPolicy: "Exact" }, a, () => [])) {
    return undefined;
  }
  const rules = anyResource
    ? [{ operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*", "*/*"] }]
    : named(m.rules);
  const matched = matchRules(
    { rules, matchPolicy: m.matchPolicy },
    a,
    () => env.equivalents(a.resource),
  );
  if (!matched || !matchSelectors(m, a, namespace)) return undefined;
  return matched;
}

const NO_PARAMS = [null];

/** The violations of the policy for `a`, evaluated once per parameter object. */
async function evaluate(
  env: PolicyEnvironment,
  a: AdmissionAttributes,
  policy: Policy,
  binding: Binding,
  matched: Matched,
  namespace: KubeObject | undefined,
): Promise<Violation[]> {
  // Without a paramKind, once with no params (and no promise to wait for).
  const params = policy.paramKind ? await paramsOf(env, a, policy.paramKind, binding) : NO_PARAMS;
  if (params === "skip") return [];
  // What every expression of the policy may read, each part converted to CEL when an
  // expression first reads it, once for all of them.
  let request: unknown;
  const shared = {
    object: prepared(matched.target.object ?? null, "object"),
    oldObject: prepared(matched.target.oldObject ?? null, "oldObject"),
    namespaceObject: prepared(namespace ?? null, "namespaceObject"),
    request: () => request ??= prepared(admissionRequest("", a, matched.target, false), "request"),
  };
  const violations: Violation[] = [];
  for (const param of params) {
    // The policy's variables, set in order below (match conditions, which run first, see none).
    const variables: Record<string, unknown> = {};
    const inputs = new PolicyInputs(shared, prepared(param, "params"), variables);
    // The result, or a promise when the expression asks the authorizer (await only those:
    // each await is a turn of the microtask queue).
    const run = (e: Compiled): unknown => {
      if (e instanceof Error) throw e;
      return evaluateWithAuthorizer(env.authorizer, a.user, e, inputs);
    };
    const failed = (what: string, err: unknown): Violation | undefined =>
      policy.failurePolicy === "Ignore"
        ? void env.logger.warn(
          `admission: policy ${policy.name}: ${what}: ${(err as Error).message}`,
        )
        : { message: `${what} resulted in error: ${(err as Error).message}`, reason: "Invalid" };
    let skip = false;
    for (const c of policy.matchConditions) {
      try {
        const r = run(c.expression);
        if ((r instanceof Promise ? await r : r) === false) skip = true;
      } catch (err) {
        const v = failed(`match condition '${c.name}'`, err);
        if (v) violations.push(v);
        skip = true;
      }
      if (skip) break;
    }
    if (skip) continue;
    let broken: Violation | undefined;
    for (const v of policy.variables) {
      try {
        const r = run(v.expression);
        variables[v.name] = r instanceof Promise ? await r : r;
      } catch (err) {
        broken = failed(`variable '${v.name}'`, err) ?? { message: "", reason: "" };
        break;
      }
    }
    if (broken) {
      if (broken.message) violations.push(broken);
      continue;
    }
    for (const v of policy.validations) {
      let ok: unknown;
      try {
        const r = run(v.expression);
        ok = r instanceof Promise ? await r : r;
      } catch (err) {
        const f = failed(`expression '${v.text}'`, err);
        if (f) violations.push(f);
        continue;
      }
      if (ok === true) continue;
      violations.push({ message: await messageOf(v, run), reason: v.reason });
    }
    for (const annotation of policy.auditAnnotations) {
      try {
        const value = await run(annotation.valueExpression);
        if (value !== null && value !== undefined) {
          a.auditAnnotations[`${policy.name}/${annotation.key}`] = String(value);
        }
      } catch (err) {
        env.logger.warn(
          `admission: policy ${policy.name}: audit annotation ${annotation.key}: ${
            (err as Error).message
          }`,
        );
      }
    }
  }
  return violations;
}

/** The variables of a policy's expressions; the request is made (once, `shared.request`) only
 * if one reads it. */
class PolicyInputs {
  [variable: string]: unknown;
  readonly object: unknown;
  readonly oldObject: unknown;
  readonly namespaceObject: unknown;
  readonly #request: () => unknown;

  constructor(
    shared: { object: unknown; oldObject: unknown; namespaceObject: unknown; request(): unknown },
    readonly params: unknown,
    readonly variables: Record<string, unknown>,
  ) {
    this.object = shared.object;
    this.oldObject = shared.oldObject;
    this.namespaceObject = shared.namespaceObject;
    this.#request = shared.request;
  }

  get request(): unknown {
    return this.#request();
  }
}

/** `value` as CEL input, converted once; as it is when it cannot be converted, so that each
 * expression that uses it fails on it as before. */
function prepared(value: unknown, name: string): unknown {
  try {
    return preparedInput(value, name);
  } catch {
    return value;
  }
}

async function messageOf(
  v: Policy["validations"][number],
  run: (e: Compiled) => unknown,
): Promise<string> {
  if (v.messageExpression) {
    try {
      const m = await run(v.messageExpression);
      if (typeof m === "string" && m.trim()) return m;
    } catch { /* kube falls back to message */ }
  }
  return v.message ?? `failed expression: ${v.text}`;
}

/** The parameter objects of a policy's `paramKind`; "skip" when none is found and the binding
 * allows that. Throws when the binding cannot be configured. */
async function paramsOf(
  env: PolicyEnvironment,
  a: AdmissionAttributes,
  paramKind: NonNullable<Policy["paramKind"]>,
  binding: Binding,
): Promise<(KubeObject | null)[] | "skip"> {
  const ref = binding.paramRef;
  if (!ref) {
    throw new Error(
      "failed to configure binding: paramRef is required when the policy has a paramKind",
    );
  }
  if (ref.selector instanceof Error) {
    throw new Error(`failed to configure binding: ${ref.selector.message}`);
  }
  const found = await env.params(paramKind, {
    namespace: ref.namespace ?? a.namespace,
    name: ref.name,
    selector: ref.selector,
  });
  if (found === undefined) {
    throw new Error(
      `failed to configure binding: paramKind ${paramKind.apiVersion}, Kind=${paramKind.kind} is not served`,
    );
  }
  if (found.length) return found;
  if (ref.parameterNotFoundAction === "Allow") return "skip";
  throw new Error(
    "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
  );
}
