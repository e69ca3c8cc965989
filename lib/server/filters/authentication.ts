/**
 * Authentication filter: who is asking. A recognised credential sets `ctx.user`; a request
 * without credentials is served as the anonymous user where anonymous access is on for its
 * path (the authorizers then judge it), else 401. A credential that nobody recognises is 401
 * even where anonymous access is on, as in kube: a bad token is never read as "no token".
 *
 * While anonymous access is not configured, the probe and version paths are served without a
 * user (what kube's default anonymous access and `system:public-info-viewer` give); once it is
 * (the authentication configuration's `anonymous`, even `enabled: false`, or
 * `--anonymous-auth=true`), the configuration alone decides, as in kube: with `conditions:
 * [{path: /livez}]`, `/version` without credentials is 401.
 */

import { unauthorized } from "../../api/mod.ts";
import { anonymousUser, type Authenticator } from "../../auth/mod.ts";
import type { Filter, Handler, RequestContext, UserInfo } from "../context.ts";

/** Paths anyone may read without credentials while anonymous access is not configured. */
const PUBLIC = [/^\/(livez|readyz|healthz)(\/[^/]*)?$/, /^\/version\/?$/];

/** Anonymous access, asked per request (the authentication configuration may be reloaded). */
export interface AnonymousPolicy {
  /** Whether a request without credentials to `path` is served as the anonymous user. */
  allowed(path: string): boolean;
  /** Whether anonymous access is configured (on, or shaped by a file); if not, probes are
   * public. */
  configured(): boolean;
}

const NO_ANONYMOUS: AnonymousPolicy = { allowed: () => false, configured: () => false };

export function authenticationFilter(
  authenticator: Authenticator,
  anonymous: AnonymousPolicy = NO_ANONYMOUS,
): Filter {
  const withUser = (ctx: RequestContext, next: Handler, user: UserInfo | undefined) => {
    if (user) {
      ctx.user = user;
      return next(ctx);
    }
    if (!ctx.req.headers.has("Authorization")) {
      if (anonymous.allowed(ctx.info.path)) {
        ctx.user = anonymousUser();
        return next(ctx);
      }
      if (!anonymous.configured() && PUBLIC.some((re) => re.test(ctx.info.path))) {
        return next(ctx);
      }
    }
    throw unauthorized();
  };
  // No promise of its own when the authenticator answers at once (static tokens do).
  return (ctx, next) => {
    const user = authenticator.authenticate(ctx.req);
    if (user instanceof Promise) return user.then((u) => withUser(ctx, next, u));
    return withUser(ctx, next, user);
  };
}
