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
import type { ServerMetrics } from "../../metrics/mod.ts";

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
  metrics?: ServerMetrics,
): Filter {
  const attempts = metrics && authenticationAttempts(metrics);
  const withUser = (
    ctx: RequestContext,
    next: Handler,
    user: UserInfo | undefined,
    started: number,
  ) => {
    if (attempts) attempts(user !== undefined || !ctx.req.headers.has("Authorization"), started);
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
    // Timed from the request's arrival, read once for the request's own duration: the few
    // µs of parsing its URL before this (far below the metric's 1 ms first bucket) cost less
    // than a clock read of its own, a tenth of a µs here.
    const started = attempts ? (ctx.arrived || performance.now()) : 0;
    let user;
    try {
      user = authenticator.authenticate(ctx.req);
    } catch (err) {
      attempts?.(undefined, started);
      throw err;
    }
    if (user instanceof Promise) {
      return user.then(
        (u) => withUser(ctx, next, u, started),
        (err) => {
          attempts?.(undefined, started);
          throw err;
        },
      );
    }
    return withUser(ctx, next, user, started);
  };
}

/**
 * Records one attempt (`authentication_attempts`, `authentication_duration_seconds`): success
 * when a user is known or the request carries no credential (served as anonymous or refused
 * by authorization, as kube's anonymous authenticator succeeds), failure when a credential is
 * not recognised, error when authenticating failed.
 */
function authenticationAttempts(metrics: ServerMetrics) {
  const result = (name: string) => ({
    attempts: metrics.authenticationAttempts.child(name),
    duration: metrics.authenticationDuration.child(name),
  });
  const success = result("success");
  const failure = result("failure");
  const error = result("error");
  return (ok: boolean | undefined, started: number) => {
    const r = ok === undefined ? error : ok ? success : failure;
    r.attempts.inc();
    r.duration.observe((performance.now() - started) / 1000);
  };
}
