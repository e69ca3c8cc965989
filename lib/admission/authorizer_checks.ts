/**
 * The CEL `authorizer` library in admission expressions (webhook match conditions, policies):
 * the library asks synchronously, the server's authorizer may answer asynchronously (a
 * webhook), so an expression is evaluated in rounds until it asks nothing new.
 */

import type { UserInfo } from "../api/mod.ts";
import type { Authorizer } from "../auth/mod.ts";
import type { CelAuthorizer, CelAuthorizerAttributes } from "../cel/mod.ts";

/** An expression as {@link evaluateWithAuthorizer} takes it. */
interface Expression {
  evaluate(v: Record<string, unknown>, o?: { authorizer: CelAuthorizer }): unknown;
  /** Whether it names the variable: one that does not name `authorizer` is evaluated at once. */
  usesVariable?(name: string): boolean;
}

/**
 * Evaluates a condition whose `authorizer` checks are asynchronous here: each round answers
 * the checks seen so far (no opinion for new ones) and collects the new ones, which are then
 * asked; an expression is pure, so the round in which it asks nothing new is its answer. An
 * expression without checks is evaluated at once: its result, not a promise (or it throws).
 */
export function evaluateWithAuthorizer(
  authorizer: Authorizer | undefined,
  user: UserInfo,
  expression: Expression,
  variables: Record<string, unknown>,
): unknown {
  if (expression.usesVariable?.("authorizer") === false) return expression.evaluate(variables);
  return withChecks(authorizer, user, expression, variables);
}

async function withChecks(
  authorizer: Authorizer | undefined,
  user: UserInfo,
  expression: Expression,
  variables: Record<string, unknown>,
): Promise<unknown> {
  const answers = new Map<string, { decision: "allow" | "deny" | "noOpinion"; reason: string }>();
  for (let round = 0; round < 16; round++) {
    const asked: CelAuthorizerAttributes[] = [];
    const celAuthorizer: CelAuthorizer = {
      check(attributes) {
        const known = answers.get(JSON.stringify(attributes));
        if (known) return known;
        asked.push(attributes);
        return { decision: "noOpinion", reason: "" };
      },
    };
    const result = expression.evaluate(variables, { authorizer: celAuthorizer });
    if (!asked.length || !authorizer) return result;
    for (const attributes of asked) {
      answers.set(JSON.stringify(attributes), await authorize(authorizer, user, attributes));
    }
  }
  throw new Error("too many authorizer checks");
}

async function authorize(
  authorizer: Authorizer,
  user: UserInfo,
  c: CelAuthorizerAttributes,
): Promise<{ decision: "allow" | "deny" | "noOpinion"; reason: string }> {
  const subject = c.serviceAccount
    ? {
      username: `system:serviceaccount:${c.serviceAccount.namespace}:${c.serviceAccount.name}`,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${c.serviceAccount.namespace}`],
    }
    : user;
  const { serviceAccount: _, ...attributes } = c;
  const result = await authorizer.authorize({ ...attributes, user: subject });
  const decision = result.decision === "Allow"
    ? "allow"
    : result.decision === "Deny"
    ? "deny"
    : "noOpinion";
  return { decision, reason: result.reason ?? "" };
}
