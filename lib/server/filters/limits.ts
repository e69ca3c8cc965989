/** Request limits: refuse bodies over the configured size before any handler reads them. */

import { entityTooLarge } from "../../api/mod.ts";
import type { Filter } from "../context.ts";

export function bodyLimitFilter(maxBytes: number): Filter {
  return (ctx, next) => {
    const declared = Number(ctx.req.headers.get("Content-Length") ?? "0");
    if (declared > maxBytes) throw entityTooLarge(maxBytes);
    return next(ctx);
  };
}
