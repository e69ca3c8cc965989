/** Authentication filter: 401 unless the request carries a credential we recognise. */

import { unauthorized } from "../../api/errors.ts";
import type { Authenticator } from "../../auth/authenticator.ts";
import type { Filter } from "../context.ts";

/** Paths anyone may read without credentials. */
const PUBLIC = [/^\/(livez|readyz|healthz)(\/[^/]*)?$/, /^\/version\/?$/];

export function authenticationFilter(authenticator: Authenticator): Filter {
  return async (ctx, next) => {
    const user = await authenticator.authenticate(ctx.req);
    if (user) {
      ctx.user = user;
      return next(ctx);
    }
    if (PUBLIC.some((re) => re.test(ctx.info.path))) return next(ctx);
    throw unauthorized();
  };
}
