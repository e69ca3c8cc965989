/**
 * Kubernetes' authorizer library: `authorizer.group(g).resource(r)` then optional
 * `.subresource(s)`, `.namespace(ns)`, `.name(n)`, then `.check(verb)`; or
 * `authorizer.path(p).check(httpVerb)`; `authorizer.serviceAccount(ns, name)` asks about that
 * account instead. A check yields a Decision with `allowed()`, `reason()`, `errored()` and
 * `error()`. Checks go to a synchronous {@link CelAuthorizer} and cost 350000 each.
 */

import type { CelValue } from "@bufbuild/cel";
import { canonicalGroup, nameIsDNSLabel, nameIsDNSSubdomain } from "../../api/mod.ts";
import { AUTHZ_CHECK_COST } from "../cost.ts";
import type { Library, Overload } from "../library.ts";
import { identityKey, type OpaqueKind, unwrapOpaque, wrapOpaque } from "../opaque.ts";
import { BOOL, opaque, STRING, type Type } from "../types.ts";

export type CelAuthorizerAttributes = Parameters<CelAuthorizer["check"]>[0];

/** What the authorizer library asks; resolves synchronously from a precomputed answer set or a
 * synchronous authorizer. */
export interface CelAuthorizer {
  check(attributes: {
    verb: string;
    resourceRequest: boolean;
    apiGroup?: string;
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    path?: string;
    /** serviceAccount(namespace, name) switches the subject. */
    serviceAccount?: { namespace: string; name: string };
  }): { decision: "allow" | "deny" | "noOpinion"; reason: string };
}

interface Subject {
  readonly authorizer: CelAuthorizer;
  readonly serviceAccount?: { namespace: string; name: string };
}
interface PathCheck {
  readonly subject: Subject;
  readonly path: string;
}
interface GroupCheck {
  readonly subject: Subject;
  readonly group: string;
}
interface ResourceCheck extends GroupCheck {
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}
interface Decision {
  readonly decision: "allow" | "deny" | "noOpinion";
  readonly reason: string;
  readonly error: string;
}

const kind = <T extends object>(name: string): OpaqueKind<T> => ({
  name: `kubernetes.authorization.${name}`,
  key: identityKey,
});
const AUTHORIZER_KIND = kind<Subject>("Authorizer");
const PATH_CHECK_KIND = kind<PathCheck>("PathCheck");
const GROUP_CHECK_KIND = kind<GroupCheck>("GroupCheck");
const RESOURCE_CHECK_KIND = kind<ResourceCheck>("ResourceCheck");
const DECISION_KIND = kind<Decision>("Decision");

/** The type of the `authorizer` variable. */
export const AUTHORIZER = opaque(AUTHORIZER_KIND.name);
const PATH_CHECK = opaque(PATH_CHECK_KIND.name);
const GROUP_CHECK = opaque(GROUP_CHECK_KIND.name);
const RESOURCE_CHECK = opaque(RESOURCE_CHECK_KIND.name);
const DECISION = opaque(DECISION_KIND.name);

/** The value bound to the `authorizer` variable. */
export function authorizerValue(authorizer: CelAuthorizer): CelValue {
  return wrapOpaque(AUTHORIZER_KIND, { authorizer });
}

function decide(subject: Subject, attributes: CelAuthorizerAttributes): Decision {
  const asked = subject.serviceAccount
    ? { ...attributes, serviceAccount: subject.serviceAccount }
    : attributes;
  try {
    const { decision, reason } = subject.authorizer.check(asked);
    return { decision, reason, error: "" };
  } catch (err) {
    return { decision: "noOpinion", reason: "", error: (err as Error).message };
  }
}

function nonEmpty(what: string, value: string): string {
  if (value.trim() === "") throw new Error(`${what} must not be empty`);
  return value;
}

function serviceAccount(subject: Subject, namespace: string, name: string): Subject {
  if (nameIsDNSSubdomain(name).length > 0) throw new Error("Invalid service account name");
  if (nameIsDNSLabel(namespace).length > 0) throw new Error("Invalid service account namespace");
  return { authorizer: subject.authorizer, serviceAccount: { namespace, name } };
}

/** A member function from one opaque kind; builders and accessors cost 1. */
function member<T, R>(
  from: OpaqueKind<T>,
  target: Type,
  name: string,
  args: Type[],
  result: Type,
  impl: (self: T, args: string[]) => R,
  wrapResult: (value: R) => CelValue,
  cost = 1,
): Overload {
  return {
    name,
    target,
    args,
    result,
    impl: (self, values) => wrapResult(impl(unwrapOpaque(from, self!), values as string[])),
    cost: () => cost,
  };
}

const asIs = <R extends CelValue>(value: R) => value;
const toResourceCheck = (value: ResourceCheck) => wrapOpaque(RESOURCE_CHECK_KIND, value);
const toDecision = (value: Decision) => wrapOpaque(DECISION_KIND, value);

/** `.subresource(s)`, `.namespace(ns)` and `.name(n)` each set one field of the check. */
const refine = (field: "subresource" | "namespace" | "name") =>
  member(
    RESOURCE_CHECK_KIND,
    RESOURCE_CHECK,
    field,
    [STRING],
    RESOURCE_CHECK,
    (check, [value]) => ({ ...check, [field]: value }),
    toResourceCheck,
  );

export const authz: Library = {
  overloads: [
    member(
      AUTHORIZER_KIND,
      AUTHORIZER,
      "path",
      [STRING],
      PATH_CHECK,
      (subject, [path]) => ({ subject, path: nonEmpty("path", path) }),
      (v) => wrapOpaque(PATH_CHECK_KIND, v),
    ),
    member(
      AUTHORIZER_KIND,
      AUTHORIZER,
      "group",
      [STRING],
      GROUP_CHECK,
      (subject, [group]) => ({ subject, group }),
      (v) => wrapOpaque(GROUP_CHECK_KIND, v),
    ),
    member(
      AUTHORIZER_KIND,
      AUTHORIZER,
      "serviceAccount",
      [STRING, STRING],
      AUTHORIZER,
      (subject, [namespace, name]) => serviceAccount(subject, namespace, name),
      (v) => wrapOpaque(AUTHORIZER_KIND, v),
    ),
    member(
      GROUP_CHECK_KIND,
      GROUP_CHECK,
      "resource",
      [STRING],
      RESOURCE_CHECK,
      (check, [resource]) => ({
        ...check,
        resource: nonEmpty("resource", resource),
        subresource: "",
        namespace: "",
        name: "",
      }),
      toResourceCheck,
    ),
    refine("subresource"),
    refine("namespace"),
    refine("name"),
    member(
      RESOURCE_CHECK_KIND,
      RESOURCE_CHECK,
      "check",
      [STRING],
      DECISION,
      (c, [verb]) =>
        decide(c.subject, {
          verb,
          resourceRequest: true,
          apiGroup: canonicalGroup(c.group),
          resource: c.resource,
          subresource: c.subresource,
          namespace: c.namespace,
          name: c.name,
        }),
      toDecision,
      AUTHZ_CHECK_COST,
    ),
    member(
      PATH_CHECK_KIND,
      PATH_CHECK,
      "check",
      [STRING],
      DECISION,
      (c, [verb]) => decide(c.subject, { verb, resourceRequest: false, path: c.path }),
      toDecision,
      AUTHZ_CHECK_COST,
    ),
    member(DECISION_KIND, DECISION, "allowed", [], BOOL, (d) => d.decision === "allow", asIs),
    member(DECISION_KIND, DECISION, "reason", [], STRING, (d) => d.reason, asIs),
    member(DECISION_KIND, DECISION, "errored", [], BOOL, (d) => d.error !== "", asIs),
    member(DECISION_KIND, DECISION, "error", [], STRING, (d) => d.error, asIs),
  ],
};
