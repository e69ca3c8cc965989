/**
 * Authentication filter: who is asking. A recognised credential sets `ctx.user`; a request
 * without credentials is served as the anonymous user where anonymous access is on for its
 * path (the authorizers then judge it), else 401. A credential that nobody recognises is 401
 * even where anonymous access is on, as in kube: a bad token is never read as "no token".
 */

import { unauthorized } from "../../api/errors.ts";
import type { Authenticator } from "../../auth/authenticator.ts";
import { anonymousUser } from "../../auth/anonymous.ts";
import type { Filter } from "../context.ts";

/** Paths anyone may read without credentials while anonymous access is off (probes). */
const PUBLIC = [/^\/(livez|readyz|healthz)(\/[^/]*)?$/, /^\/version\/?$/];

/** Whether a request without credentials to `path` is served as the anonymous user. */
export type AnonymousPolicy = (path: string) => boolean;

export function authenticationFilter(
  authenticator: Authenticator,
  anonymous: AnonymousPolicy = () => false,
): Filter {
  return async (ctx, next) => {
    const user = await authenticator.authenticate(ctx.req);
    if (user) {
      ctx.user = user;
      return next(ctx);
    }
    if (!ctx.req.headers.has("Authorization")) {
      if (anonymous(ctx.info.path)) {
        ctx.user = anonymousUser();
        return next(ctx);
      }
      if (PUBLIC.some((re) => re.test(ctx.info.path))) return next(ctx);
    }
    throw unauthorized();
  };
}
