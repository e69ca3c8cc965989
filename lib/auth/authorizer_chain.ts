/**
 * The authorizer chain of an authorization configuration, as kube-apiserver builds it: the
 * `system:masters` group first (always allowed, whatever the configuration), then the
 * configured authorizers in order, joined by {@link unionAuthorizer}.
 *
 * @module
 */

import { ADMIN_GROUP, type Logger, type UserInfo } from "../api/mod.ts";
import {
  alwaysAllow,
  alwaysDeny,
  type Attributes,
  type AuthorizationResult,
  type Authorizer,
  type RuleSet,
} from "./authorizer.ts";
import type { HttpClientFactory } from "../egress/mod.ts";
import type { AuthorizationConfig } from "./authorization_config.ts";
import { WebhookAuthorizer } from "./webhook_authorizer.ts";

/**
 * Asks each authorizer in order: the first Allow or Deny decides, with that authorizer's
 * reason. When all have no opinion the answer is no opinion (which the server treats as
 * forbidden) with every reason joined by newlines and every evaluation error, as kube's union.
 * An authorizer that throws counts as no opinion with its error as evaluation error.
 *
 * `rulesFor` joins every authorizer's rules; the set is incomplete when any part is.
 */
export function unionAuthorizer(authorizers: readonly Authorizer[]): Authorizer {
  /** Asks authorizers from `from` on; synchronous until one answers with a promise. */
  const ask = (
    attributes: Attributes,
    from: number,
    reasons: string[],
    errors: string[],
  ): AuthorizationResult | Promise<AuthorizationResult> => {
    for (let i = from; i < authorizers.length; i++) {
      let result: AuthorizationResult | Promise<AuthorizationResult>;
      try {
        result = authorizers[i].authorize(attributes);
      } catch (err) {
        result = { decision: "NoOpinion", evaluationError: (err as Error).message };
      }
      if (result instanceof Promise) {
        return result.then(
          (r) => r,
          (err): AuthorizationResult => ({
            decision: "NoOpinion",
            evaluationError: (err as Error).message,
          }),
        ).then((r) => {
          if (r.decision !== "NoOpinion") return r;
          note(r, reasons, errors);
          return ask(attributes, i + 1, reasons, errors);
        });
      }
      if (result.decision !== "NoOpinion") return result;
      note(result, reasons, errors);
    }
    const out: AuthorizationResult = { decision: "NoOpinion" };
    if (reasons.length > 0) out.reason = reasons.join("\n");
    if (errors.length > 0) out.evaluationError = aggregate(errors);
    return out;
  };
  return {
    authorize: (attributes) => ask(attributes, 0, [], []),

    async rulesFor(user: UserInfo, namespace: string): Promise<RuleSet> {
      const out: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false };
      const errors: string[] = [];
      for (const authorizer of authorizers) {
        let rules: RuleSet;
        try {
          rules = await authorizer.rulesFor(user, namespace);
        } catch (err) {
          rules = {
            resourceRules: [],
            nonResourceRules: [],
            incomplete: true,
            evaluationError: (err as Error).message,
          };
        }
        out.resourceRules.push(...rules.resourceRules);
        out.nonResourceRules.push(...rules.nonResourceRules);
        out.incomplete ||= rules.incomplete;
        if (rules.evaluationError) errors.push(rules.evaluationError);
      }
      if (errors.length > 0) out.evaluationError = aggregate(errors);
      return out;
    },
  };
}

/**
 * Allows members of any of `groups` and has no opinion on others, as kube's privileged-group
 * authorizer. It lists no rules: members' rules come from the other authorizers, as in kube.
 */
export function privilegedGroupsAuthorizer(groups: readonly string[]): Authorizer {
  return {
    authorize: ({ user }) => ({
      decision: user.groups.some((g) => groups.includes(g)) ? "Allow" : "NoOpinion",
    }),
    rulesFor: () => Promise.resolve({ resourceRules: [], nonResourceRules: [], incomplete: false }),
  };
}

/** What {@link buildAuthorizer} needs besides the configuration. */
export interface BuildAuthorizerDeps {
  /** Makes the RBAC authorizer; called once per `type: RBAC` entry (there is at most one). */
  rbac: () => Authorizer;
  /** Where webhook failures are reported. @default nowhere */
  logger?: Pick<Logger, "warn">;
  /** The clock of the webhooks' caches, in milliseconds. @default Date.now */
  now?: () => number;
  /** Makes the webhooks' HTTP clients (the `cluster` egress selection). @default direct */
  createHttpClient?: HttpClientFactory;
}

/** The server's authorizer; {@link close} releases the webhooks' connections. */
export interface ChainAuthorizer extends Authorizer {
  close(): void;
}

/**
 * The authorizer a validated configuration describes: `system:masters` first, then each
 * configured authorizer in order.
 *
 * @example
 * ```ts
 * const cfg = await loadAuthorizationConfig("authz.yaml");
 * const authorizer = buildAuthorizer(cfg, { rbac: () => rbac });
 * // … serve; on shutdown:
 * authorizer.close();
 * ```
 */
export function buildAuthorizer(
  config: AuthorizationConfig,
  deps: BuildAuthorizerDeps,
): ChainAuthorizer {
  const webhooks: WebhookAuthorizer[] = [];
  const chain: Authorizer[] = [privilegedGroupsAuthorizer([ADMIN_GROUP])];
  for (const entry of config.authorizers) {
    switch (entry.type) {
      case "RBAC":
        chain.push(deps.rbac());
        break;
      case "AlwaysAllow":
        chain.push(alwaysAllow);
        break;
      case "AlwaysDeny":
        chain.push(alwaysDeny);
        break;
      case "Webhook": {
        const webhook = new WebhookAuthorizer({
          name: entry.name,
          config: entry.webhook,
          logger: deps.logger,
          now: deps.now,
          createHttpClient: deps.createHttpClient,
        });
        webhooks.push(webhook);
        chain.push(webhook);
        break;
      }
    }
  }
  const union = unionAuthorizer(chain);
  return {
    authorize: union.authorize,
    rulesFor: union.rulesFor,
    close: () => webhooks.forEach((w) => w.close()),
  };
}

/** Keeps a no-opinion answer's reason and error for the union's answer. */
function note(result: AuthorizationResult, reasons: string[], errors: string[]): void {
  if (result.reason) reasons.push(result.reason);
  if (result.evaluationError) errors.push(result.evaluationError);
}

/** Several errors as kube's aggregate error prints them: one as is, more as `[a, b]`. */
function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
}
