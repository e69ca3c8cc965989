/**
 * Request tracing, as kube-apiserver's tracing filter does it: a span per request named
 * `<METHOD> <route>` (`GET /api/v1/namespaces/{:namespace}/configmaps/{:name}`, the method
 * alone for non-resource paths) with the request's verb, resource, user agent and status
 * code, continuing the caller's trace (W3C `traceparent`) when the caller is privileged
 * (`system:masters`, `system:monitoring`) and linking to it otherwise, as kube does so that
 * anyone cannot pick trace ids or force sampling. Its children: `Authenticate`, `Authorize`,
 * admission (each webhook call, each policy), storage operations and `SerializeObject`.
 *
 * The span starts when the request arrives (`ctx.arrived`, read by the chain's entry) and is
 * made once the caller is known ({@link tracingFilter}, right after authentication), with the
 * authentication that came between as its first child. Requests refused at authentication
 * (401) are not traced. The filter is in the chain only while tracing is configured.
 *
 * @module
 */

import { kubeGroup, StatusError } from "../../api/mod.ts";
import type { Attributes as AuthorizationAttributes, Authorizer } from "../../auth/mod.ts";
import {
  childSpan,
  nowMs,
  parseTraceParent,
  type Span,
  type Tracer,
  withSpan,
} from "../../tracing/mod.ts";
import type { Filter } from "../context.ts";
import type { RequestInfo } from "../request_info.ts";

/** Groups whose `traceparent` is trusted as the parent (kube's privileged groups). */
const TRUSTED_GROUPS = new Set(["system:masters", "system:monitoring"]);

/** Right after authentication: the request's span, current while the rest of the chain runs. */
export function tracingFilter(tracer: Tracer): Filter {
  return async (ctx, next) => {
    const authenticated = nowMs();
    // The chain's entry read the clock when the request came (ctx.arrived).
    const arrived = ctx.arrived ? performance.timeOrigin + ctx.arrived : authenticated;
    const incoming = parseTraceParent(ctx.req.headers.get("traceparent"));
    const trusted = incoming && ctx.user?.groups?.some((g) => TRUSTED_GROUPS.has(g));
    const span = tracer.startRequest(spanName(ctx.req.method, ctx.info), {
      startTime: arrived,
      parent: trusted ? incoming : undefined,
      link: trusted ? undefined : incoming,
      // What kube's span has (otelhttp's method, user agent and status, kube's http.target and
      // audit-id), with the request's verb and resource. Every attribute is encoded again for
      // export: the list is kept short.
      attributes: {
        "http.request.method": ctx.req.method,
        "http.target": ctx.url.pathname + ctx.url.search,
        "user_agent.original": ctx.req.headers.get("User-Agent") ?? undefined,
        "audit-id": ctx.auditID,
        verb: ctx.info.verb,
        resource: resourceOf(ctx.info),
      },
    });
    if (!span.recording) return next(ctx);
    span.child("Authenticate", undefined, arrived).end(authenticated);
    let status = 500;
    try {
      const res = await withSpan(span, () => next(ctx));
      status = res.status;
      return res;
    } catch (err) {
      if (err instanceof StatusError) status = err.code;
      throw err;
    } finally {
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) span.fail(`HTTP ${status}`);
      span.end();
    }
  };
}

/** The authorizer, each decision an `Authorize` span of the current request's. */
export function tracedAuthorizer(authorizer: Authorizer): Authorizer {
  return {
    rulesFor: (user, namespace) => authorizer.rulesFor(user, namespace),
    authorize(attributes: AuthorizationAttributes) {
      const span = childSpan("Authorize", { verb: attributes.verb });
      if (!span.recording) return authorizer.authorize(attributes);
      let res;
      try {
        res = withSpan(span, () => authorizer.authorize(attributes));
      } catch (err) {
        end(span, undefined, err);
        throw err;
      }
      if (!(res instanceof Promise)) return end(span, res);
      return res.then((r) => end(span, r), (err) => {
        end(span, undefined, err);
        throw err;
      });
    },
  };
}

function end<T extends { decision: string }>(span: Span, res: T | undefined, err?: unknown): T {
  if (res) span.setAttribute("decision", res.decision);
  if (err) span.fail(err instanceof Error ? err.message : String(err));
  span.end();
  return res as T;
}

/** kube's span name: the method and the route with `{:namespace}` and `{:name}`. */
export function spanName(method: string, info: RequestInfo): string {
  if (!info.isResourceRequest) return method;
  let route = `/${info.apiPrefix}`;
  if (info.group) route += `/${info.kubeSpelling ? kubeGroup(info.group) : info.group}`;
  route += `/${info.version}`;
  if (info.namespace) route += "/namespaces/{:namespace}";
  route += `/${info.resource}`;
  if (info.name) route += "/{:name}";
  if (info.subresource) route += `/${info.subresource}`;
  return `${method} ${route}`;
}

function resourceOf(info: RequestInfo): string | undefined {
  if (!info.isResourceRequest) return undefined;
  return info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
}
