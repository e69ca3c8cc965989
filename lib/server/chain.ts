/**
 * The filter chain, built in one function, in order. Each filter is a function of
 * (context, next); around them, `serve` is the single error exit that turns anything thrown
 * into a Status response, and records each request's metrics.
 */

import type { Authenticator, Authorizer } from "../auth/mod.ts";
import { internalError, type Logger, StatusError } from "../api/mod.ts";
import type { Filter, Handler, RequestContext } from "./context.ts";
import { type AnonymousPolicy, authenticationFilter } from "./filters/authentication.ts";
import { authorizationFilter } from "./filters/authorization.ts";
import { auditFailedAuthentication, auditFilter, type Auditing } from "./filters/audit.ts";
import { compressionFilter } from "./filters/compression.ts";
import { impersonationFilter } from "./filters/impersonation.ts";
import { bodyLimitFilter } from "./filters/limits.ts";
import { inFlightFilter, type SharedSeats } from "./filters/inflight.ts";
import { type RequestDeadlines, requestTimeoutFilter } from "./filters/timeout.ts";
import { methodFilter } from "./filters/method.ts";
import { requestMetricsRecorder } from "./filters/metrics.ts";
import type { ServerMetrics } from "../metrics/mod.ts";
import type { ServedResources } from "./request_labels.ts";
import { tracedAuthorizer, tracingFilter } from "./filters/tracing.ts";
import type { Tracer } from "../tracing/mod.ts";
import { requestInfoOf } from "./request_info.ts";
import { type BodyWriting, errorResponse, hasKubeHeaders, NO_CACHE } from "./respond.ts";

export interface ChainDeps {
  authenticator: Authenticator;
  /** Where requests without credentials are served as system:anonymous. @default nowhere */
  anonymous?: AnonymousPolicy;
  authorizer: Authorizer;
  maxBodyBytes: number;
  /** `--request-timeout`, in milliseconds, and the deadlines' clock (the caller stops it). */
  requestTimeoutMs: number;
  deadlines: RequestDeadlines;
  /** `--max-requests-inflight` and `--max-mutating-requests-inflight` (0: no limit). */
  inFlight: { readOnly: number; mutating: number; shared?: SharedSeats };
  /** The `APIResponseCompression` feature gate: gzip get and list responses. */
  responseCompression: boolean;
  /** How this server sends response bodies; read as each request comes. */
  bodies: BodyWriting;
  logger: Logger;
  /** `--audit-policy-file` with a backend; absent: no auditing (answers still carry an
   * `Audit-ID`, as kube's do). */
  auditing?: Auditing;
  /** The server's metrics, and what it serves (which bounds the labels of requests). */
  metrics?: { metrics: ServerMetrics; served: ServedResources };
  /** `--tracing-config-file`'s tracer; absent or disabled: nothing of tracing in the chain. */
  tracer?: Tracer;
  handler: Handler;
}

export function buildHandlerChain(
  deps: ChainDeps,
): (req: Request, signal: AbortSignal, remoteAddr?: string) => Promise<Response> {
  const tracer = deps.tracer?.enabled ? deps.tracer : undefined;
  // Every answer is counted, whoever refuses it: recorded by serve below, around the chain.
  const record = deps.metrics && requestMetricsRecorder(deps.metrics.metrics, deps.metrics.served);
  // When the request came: its duration's start, its span's, and its audit event's arrival.
  const timed = record !== undefined || tracer !== undefined || deps.auditing !== undefined;
  const filters: Filter[] = [
    // Unknown methods before anything: no one authenticates or authorizes a method that
    // names no verb.
    methodFilter(),
    // The deadline covers everything after it, authentication and webhooks included.
    requestTimeoutFilter(deps.requestTimeoutMs, deps.deadlines),
    // Authentication next: everything after it may rely on ctx.user.
    authenticationFilter(deps.authenticator, deps.anonymous, deps.metrics?.metrics),
    // Tracing once the caller is known: whether its traceparent is trusted depends on it.
    ...(tracer ? [tracingFilter(tracer)] : []),
    // Audit right after authentication, as kube's: the event's user is the authenticated
    // one, and impersonation, authorization and admission write into the event.
    ...(deps.auditing ? [auditFilter(deps.auditing)] : []),
    // Impersonation after authentication (the caller must be known and allowed to
    // impersonate) and before authorization, which then judges the impersonated user.
    impersonationFilter(deps.authorizer),
    // Seats are counted per user (the impersonated one), before any work is done.
    inFlightFilter(deps.inFlight, (inUse) => {
      if (deps.metrics) deps.metrics.metrics.sources.inflight = inUse;
    }),
    // Authorization before any work is done for the request.
    authorizationFilter(tracer ? tracedAuthorizer(deps.authorizer) : deps.authorizer),
    // Compression wraps what the handler returns; errors are thrown past it to the error exit
    // below, so Status errors are never compressed.
    compressionFilter(deps.responseCompression),
    // Limits last, so a refused body is still attributed to a user in audit logs later.
    bodyLimitFilter(deps.maxBodyBytes),
  ];
  const handler = filters.reduceRight<Handler>(
    (next, filter) => (ctx) => filter(ctx, next),
    deps.handler,
  );
  const serve = async (
    req: Request,
    signal: AbortSignal,
    remoteAddr?: string,
    auditID?: string,
  ) => {
    let ctx: RequestContext | undefined;
    const arrived = timed ? performance.now() : 0;
    try {
      const url = new URL(req.url);
      // Every field from the start: filters that fill them in then keep one object shape.
      const info = requestInfoOf(req.method, url);
      ctx = {
        req,
        url,
        info,
        warnings: [],
        signal,
        arrived,
        user: undefined,
        authorizer: undefined,
        kubeSpelling: info.kubeSpelling,
        streamLargeBodies: deps.bodies.streamLarge,
        remoteAddr,
        auditID,
        audit: undefined,
      };
      const res = await handler(ctx);
      record?.(ctx, res);
      return withKubeHeaders(res, auditID);
    } catch (err) {
      if (record && ctx) record(ctx, undefined, err);
      if (!(err instanceof StatusError)) {
        deps.logger.error(
          `${req.method} ${req.url}: internal error`,
          err,
          (err as Error)?.stack ?? "",
        );
        return withKubeHeaders(
          errorResponse(
            ctx,
            internalError("an unexpected error occurred; see the server log"),
            deps.bodies.streamLarge,
          ),
          auditID,
        );
      }
      // Refused by authentication: audited here, the audit filter never saw it.
      if (err.code === 401 && deps.auditing && ctx && !ctx.user) {
        auditFailedAuthentication(deps.auditing, ctx);
      }
      return withKubeHeaders(errorResponse(ctx, err, deps.bodies.streamLarge), auditID);
    }
  };
  // Every answer carries an audit ID, errors included and with auditing off, as kube's
  // (WithAuditInit is always in its chain); a client's own is kept, as kube keeps it. (Set by
  // serve itself: a wrapper awaiting it cost a promise per request.)
  return (req, signal, remoteAddr) =>
    serve(req, signal, remoteAddr, req.headers.get("Audit-ID") || crypto.randomUUID());
}

/** `res` with kube's headers of every answer: `Audit-ID`, and `Cache-Control` unless it has
 * its own (kube's WithCacheControl). Answers made by respond.ts have them already. */
function withKubeHeaders(res: Response, auditID: string | undefined): Response {
  if (auditID === undefined || hasKubeHeaders(res)) return res;
  try {
    setCommonHeaders(res.headers, auditID);
    return res;
  } catch {
    // Immutable headers: the same answer with its own.
    const headers = new Headers(res.headers);
    setCommonHeaders(headers, auditID);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}

function setCommonHeaders(headers: Headers, auditID: string): void {
  headers.set("Audit-ID", auditID);
  if (!headers.has("Cache-Control")) headers.set("Cache-Control", NO_CACHE);
}
