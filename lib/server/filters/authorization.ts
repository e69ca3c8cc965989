/**
 * Authorization filter. Until RBAC and webhook authorizers land, every authenticated user may
 * do everything (the README says so). The filter exists now so the chain's order is final.
 */

import type { Filter } from "../context.ts";

export function authorizationFilter(): Filter {
  return (ctx, next) => next(ctx);
}
