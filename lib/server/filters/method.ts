/**
 * Method filter: only the methods that name a verb (GET, HEAD, POST, PUT, PATCH, DELETE) and
 * OPTIONS are served. Any other (`LIST`, `DELETECOLLECTION`, a lowercase `get`) is 405, as kube
 * answers, before the caller is authenticated: no method name ever reaches an authorizer as a
 * verb.
 */

import { methodNotAllowed } from "../../api/mod.ts";
import type { Filter } from "../context.ts";

const SERVED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export function methodFilter(): Filter {
  return (ctx, next) => {
    if (!SERVED_METHODS.has(ctx.req.method)) throw methodNotAllowed();
    return next(ctx);
  };
}
