/**
 * Audit filter: asks the audit policy about each request and hands the request's events to
 * the backend, at the stages the policy keeps. It runs right after authentication, as kube's
 * WithAudit does: the event's `user` is the authenticated user, and `impersonatedUser` the one
 * impersonation (which runs after) serves the request as. A request at level None costs the
 * policy's answer and nothing else.
 *
 * Stages: RequestReceived before anything else runs; ResponseStarted when a watch's response
 * starts; ResponseComplete when an answer is made (a watch's: when its stream ends); Panic,
 * instead of ResponseComplete, when a handler throws something that is not a Status error.
 * What the level allows is recorded: annotations (authorization's decision and reason,
 * admission's audit annotations) from Metadata; the request body as decoded from JSON or YAML
 * from Request, when the handler read it; the response body at RequestResponse (not for watches).
 */

import { parse as parseYaml } from "yaml";
import { internalError, type Logger, StatusError } from "../../api/mod.ts";
import {
  atLastStage,
  atStage,
  type AuditBackend,
  type AuditDecision,
  type AuditEvent,
  newEvent,
  type ObjectReference,
  type PolicyEvaluator,
  RawJson,
  responseStatusOf,
  sourceIPsOf,
  type Stage,
  withoutManagedFields,
} from "../../audit/mod.ts";
import type { Filter, Handler, RequestContext } from "../context.ts";
import type { RequestInfo } from "../request_info.ts";

/** What the filter needs: the policy and where events go. */
export interface Auditing {
  policy: PolicyEvaluator;
  backend: AuditBackend;
  logger: Logger;
  /** Counts each request's level (`apiserver_audit_level_total`). @default nowhere */
  countLevel?: (level: AuditDecision["level"]) => void;
}

/** What the policy matches a request on: one object literal, made once per request. */
function policyAttributes(ctx: RequestContext, user: RequestContext["user"]) {
  const info = ctx.info;
  return {
    verb: info.verb,
    resourceRequest: info.isResourceRequest,
    path: info.path,
    namespace: info.namespace,
    apiGroup: info.group,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
    user,
  };
}

const ANONYMOUS = { username: "system:anonymous", groups: ["system:unauthenticated"] };

export function auditFilter(auditing: Auditing): Filter {
  return (ctx, next) => {
    const decision = auditing.policy.evaluate(policyAttributes(ctx, ctx.user));
    auditing.countLevel?.(decision.level);
    if (decision.level === "None") return next(ctx);
    return audited(ctx, next, decision, auditing);
  };
}

/**
 * Hands the event at `stage` to the backend, unless the policy omits the stage. A promise only
 * when the request must wait for the event (a blocking webhook); a log in batch mode takes it
 * at once, and the request goes on without an await.
 */
function emit(
  auditing: Auditing,
  decision: AuditDecision,
  ev: AuditEvent,
  stage: Stage,
): void | Promise<void> {
  if (decision.omitStages.has(stage)) return;
  let sent: void | Promise<void>;
  try {
    const last = stage === "ResponseComplete" || stage === "Panic";
    sent = auditing.backend.process(last ? atLastStage(ev, stage) : atStage(ev, stage));
  } catch (err) {
    eventLost(auditing, err);
  }
  return sent?.catch((err) => eventLost(auditing, err));
}

/** A backend refused the event, which fails the request (only blocking-strict does, and only
 * for RequestReceived). */
function eventLost(auditing: Auditing, err: unknown): never {
  auditing.logger.error(`audit: the request's event could not be written: ${err}`);
  throw internalError("the audit event of the request could not be written");
}

async function audited(
  ctx: RequestContext,
  next: Handler,
  decision: AuditDecision,
  auditing: Auditing,
): Promise<Response> {
  const { info, req } = ctx;
  const level = decision.level;
  const authenticated = ctx.user;
  const annotations: Record<string, string> = {};
  const ev = newEvent({
    level,
    auditID: ctx.auditID ?? crypto.randomUUID(),
    requestURI: ctx.url.pathname + ctx.url.search,
    verb: info.verb,
    user: authenticated ?? ANONYMOUS,
    sourceIPs: sourceIPsOf(req.headers.get("x-forwarded-for"), ctx.remoteAddr),
    userAgent: req.headers.get("user-agent"),
    objectRef: info.isResourceRequest ? objectRefOf(info) : undefined,
    annotations,
    receivedAt: arrivalOf(ctx),
  });
  const recordsRequest = level !== "Metadata" && info.isResourceRequest;
  const recordsResponse = level === "RequestResponse" && info.isResourceRequest;
  ctx.audit = { annotations, keepBody: recordsRequest, keepResponse: recordsResponse };
  const received = emit(auditing, decision, ev, "RequestReceived");
  if (received) await received;

  let res: Response;
  try {
    res = await next(ctx);
  } catch (err) {
    if (ctx.user !== authenticated) ev.impersonatedUser = ctx.user;
    recordRequest(ev, ctx, decision);
    if (err instanceof StatusError) {
      ev.responseStatus = responseStatusOf(err.code, { message: err.message, reason: err.reason });
      await emit(auditing, decision, ev, "ResponseComplete");
    } else {
      ev.responseStatus = {
        metadata: {},
        status: "Failure",
        message: `APIServer panic'd: ${err}`,
        reason: "InternalError",
        code: 500,
      };
      await emit(auditing, decision, ev, "Panic");
    }
    throw err;
  }
  if (ctx.user !== authenticated) ev.impersonatedUser = ctx.user;
  recordRequest(ev, ctx, decision);
  ev.responseStatus = responseStatusOf(res.status);
  if (info.verb === "watch" && res.body && res.status < 300) {
    await emit(auditing, decision, ev, "ResponseStarted");
    return new Response(
      untilDone(res.body, () => emit(auditing, decision, ev, "ResponseComplete")),
      res,
    );
  }
  const kept = ctx.audit.response;
  if (recordsResponse && kept) {
    // The body as the handler encoded it: no need to read the response back.
    recordResponse(ev, kept, decision);
    const completed = emit(auditing, decision, ev, "ResponseComplete");
    if (completed) await completed;
    return res;
  }
  if (recordsResponse && res.body) {
    // The client's copy goes out at once and the event follows once the audit's copy is read:
    // a body that is produced only as the client reads it (a streamed list, the file store's
    // bodies) would otherwise never end while the audit waits for it.
    const [toClient, toAudit] = res.body.tee();
    const recorded = decodedBody(new Response(toAudit, { headers: res.headers })).then((obj) => {
      if (obj !== undefined) {
        ev.responseObject = decision.omitManagedFields ? withoutManagedFields(obj) : obj;
        fillObjectRef(ev, obj);
      }
      return emit(auditing, decision, ev, "ResponseComplete");
    });
    recorded.catch(() => {}); // emit logs its own failures
    return new Response(toClient, res);
  }
  const completed = emit(auditing, decision, ev, "ResponseComplete");
  if (completed) await completed;
  return res;
}

/**
 * A request refused by authentication never reaches the audit filter: its event is made here,
 * as kube's failed-authentication audit does, at stage ResponseStarted with no user, the
 * policy asked about the request without one.
 */
export function auditFailedAuthentication(auditing: Auditing, ctx: RequestContext): void {
  const info = ctx.info;
  const decision = auditing.policy.evaluate(policyAttributes(ctx, undefined));
  if (decision.level === "None" || decision.omitStages.has("ResponseStarted")) return;
  const req = ctx.req;
  const ev = newEvent({
    level: decision.level,
    auditID: ctx.auditID ?? crypto.randomUUID(),
    requestURI: ctx.url.pathname + ctx.url.search,
    verb: info.verb,
    user: {} as AuditEvent["user"],
    sourceIPs: sourceIPsOf(req.headers.get("x-forwarded-for"), ctx.remoteAddr),
    userAgent: req.headers.get("user-agent"),
    objectRef: info.isResourceRequest ? objectRefOf(info) : undefined,
    annotations: {},
    receivedAt: arrivalOf(ctx),
  });
  const scheme = req.headers.get("authorization")?.split(" ")[0]?.toLowerCase();
  const attempted = scheme ? `attempted: ${scheme}` : "no credentials provided";
  ev.responseStatus = { metadata: {}, message: `Authentication failed, ${attempted}`, code: 401 };
  const logError = (err: unknown) =>
    auditing.logger.error(`audit: the request's event could not be written: ${err}`);
  try {
    const sent = auditing.backend.process(atStage(ev, "ResponseStarted"));
    // Not awaited: the refusal does not wait for its event.
    sent?.catch(logError);
  } catch (err) {
    logError(err);
  }
}

/** The request's object, when the level records it and the handler read the body. */
function recordRequest(ev: AuditEvent, ctx: RequestContext, decision: AuditDecision): void {
  const bytes = ctx.audit?.body;
  if (!bytes || bytes.length === 0) return;
  const type = ctx.req.headers.get("content-type") ?? "";
  let obj: unknown;
  try {
    // JSON and YAML bodies (apply's included); protobuf ones are not recorded.
    if (type.includes("json")) obj = JSON.parse(new TextDecoder().decode(bytes));
    else if (type.includes("yaml")) obj = parseYaml(new TextDecoder().decode(bytes));
    else return;
  } catch {
    return;
  }
  ev.requestObject = decision.omitManagedFields ? withoutManagedFields(obj) : obj;
  fillObjectRef(ev, obj);
}

/**
 * The response's object from the body the handler encoded: JSON only (as when read back).
 * One-line JSON text goes into the event as it is; a pretty one, or one whose managed fields
 * the policy leaves out, is parsed.
 */
function recordResponse(
  ev: AuditEvent,
  kept: { body: string | Uint8Array; contentType: string },
  decision: AuditDecision,
): void {
  if (!kept.contentType.includes("json")) return;
  let text = typeof kept.body === "string" ? kept.body : new TextDecoder().decode(kept.body);
  // The JSON encoder ends a body with one newline, as kube's does.
  if (text.endsWith("\n")) text = text.slice(0, -1);
  let raw: RawJson | undefined;
  let obj: unknown;
  try {
    if (!decision.omitManagedFields && !text.includes("\n")) raw = new RawJson(text);
    else {
      obj = JSON.parse(text);
      if (decision.omitManagedFields) obj = withoutManagedFields(obj);
    }
  } catch {
    return;
  }
  ev.responseObject = raw ?? obj;
  const ref = ev.objectRef;
  // Only a create's ref lacks what the object has: the raw text is parsed only then.
  if (ref && (!ref.name || !ref.namespace)) fillObjectRef(ev, raw ? raw.value() : obj);
}

/** A JSON response body, decoded (gzip undone); undefined for anything else. */
async function decodedBody(r: Response): Promise<unknown> {
  const type = r.headers.get("content-type") ?? "";
  if (!type.includes("json") || !r.body) {
    await r.body?.cancel().catch(() => {});
    return undefined;
  }
  try {
    let body = r.body;
    if (r.headers.get("content-encoding") === "gzip") {
      body = body.pipeThrough(new DecompressionStream("gzip"));
    }
    return JSON.parse(await new Response(body).text());
  } catch {
    return undefined;
  }
}

/** A created object's name and namespace, when the URL did not have them (as kube's
 * LogRequestObject fills them). */
function fillObjectRef(ev: AuditEvent, obj: unknown): void {
  const ref = ev.objectRef;
  const meta = (obj as { metadata?: { name?: unknown; namespace?: unknown } })?.metadata;
  if (!ref || !meta || typeof meta !== "object") return;
  const name = !ref.name && typeof meta.name === "string" && meta.name ? meta.name : undefined;
  const namespace = !ref.namespace && typeof meta.namespace === "string" && meta.namespace
    ? meta.namespace
    : undefined;
  // A new reference: the earlier stages' events, which a batch still holds, keep theirs.
  if (name || namespace) {
    ev.objectRef = { ...ref, ...(name && { name }), ...(namespace && { namespace }) };
  }
}

/** When the request came (the chain's entry read the clock), as kube's
 * `requestReceivedTimestamp` is: before authentication, which may have waited on an issuer. */
function arrivalOf(ctx: RequestContext): number | undefined {
  return ctx.arrived ? performance.timeOrigin + ctx.arrived : undefined;
}

function objectRefOf(info: RequestInfo): ObjectReference {
  const ref: ObjectReference = {};
  if (info.resource) ref.resource = info.resource;
  if (info.namespace) ref.namespace = info.namespace;
  if (info.name) ref.name = info.name;
  if (info.group) ref.apiGroup = info.group;
  ref.apiVersion = info.version;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

/** `body`, calling `done` once when it ends, fails or is cancelled. */
function untilDone(
  body: ReadableStream<Uint8Array>,
  done: () => void | Promise<void>,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    // Logged by emit.
    try {
      done()?.catch(() => {});
    } catch {
      // Logged by emit.
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const r = await reader.read();
        if (r.done) {
          finish();
          controller.close();
        } else {
          controller.enqueue(r.value);
        }
      } catch (err) {
        finish();
        controller.error(err);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
}
