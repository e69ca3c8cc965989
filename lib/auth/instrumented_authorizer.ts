/**
 * An authorizer whose decisions are counted in `apiserver_authorization_decisions_total` by
 * its type and name, as kube counts each configured authorizer's: Allow is `allowed`, Deny
 * `denied`; no opinion is not a decision and is not counted.
 */

import type { Counter } from "../metrics/mod.ts";
import type { AuthorizationResult, Authorizer } from "./authorizer.ts";

export function instrumentedAuthorizer(
  type: string,
  name: string,
  authorizer: Authorizer,
  decisions: Counter,
): Authorizer {
  const allowed = decisions.child(type, name, "allowed");
  const denied = decisions.child(type, name, "denied");
  const count = (r: AuthorizationResult) => {
    if (r.decision === "Allow") allowed.inc();
    else if (r.decision === "Deny") denied.inc();
    return r;
  };
  return {
    authorize(attributes) {
      const r = authorizer.authorize(attributes);
      return r instanceof Promise ? r.then(count) : count(r);
    },
    rulesFor: (user, namespace) => authorizer.rulesFor(user, namespace),
  };
}
