/** The per-request context that filters fill in and handlers read. */

import type { RequestInfo } from "./request_info.ts";
import type { Authorizer } from "../auth/mod.ts";
import type { UserInfo } from "../api/mod.ts";

export type { UserInfo } from "../api/mod.ts";

export interface RequestContext {
  req: Request;
  url: URL;
  info: RequestInfo;
  /** Set by authentication; absent for anonymous requests to always-allowed paths. */
  user?: UserInfo;
  /** Collected `Warning` headers. */
  warnings: string[];
  /**
   * The authorizer that allowed this request, for the checks handlers make later (an apply
   * that creates needs `create` besides `patch`; a CSR approval needs `approve` on its signer):
   * see `authorizeVerb` and `authorizeAttributes` in filters/authorization.ts. Set by the
   * authorization filter; absent means everything is allowed.
   */
  authorizer?: Authorizer;
  /** The client addressed the API group by its Kubernetes name (`certificates.k8s.io`), as
   * kube's typed clients do: bodies are read and answered in that spelling. From the request
   * info (which holds the canonical group), or a review body in that spelling. */
  kubeSpelling?: boolean;
  /** Aborted when the client goes away or the server shuts down. */
  signal: AbortSignal;
  /** `performance.now()` when the request came in, read once for the request's metrics, its
   * span and its audit event; 0 when none is on. */
  arrived?: number;
  /** Larger response bodies go out as one-chunk streams: the server's `BodyWriting` when the
   * request came (respond.ts). Absent: false. */
  streamLargeBodies?: boolean;
  /** The connection's remote address, when the server knows it (audit `sourceIPs`). */
  remoteAddr?: string;
  /** The request's audit ID: the `Audit-ID` header of the request, or a new UUID. */
  auditID?: string;
  /** The request's audit event, at level Metadata and above: annotations go here
   * (authorization's decision, admission's audit annotations). */
  audit?: AuditRecord;
}

/** What a request's audit event collects from the filters and handlers after the audit
 * filter. */
export interface AuditRecord {
  /** Audit annotations: authorization's decision and reason, admission's. */
  annotations: Record<string, string>;
  /** The level records the request's object: `readBodyBytes` keeps the body it reads. */
  keepBody: boolean;
  /** The request body as the handler read it. */
  body?: Uint8Array;
  /** The level records the response's object: the response maker keeps the body it encodes
   * (respond.ts), so the audit need not read the body back. */
  keepResponse: boolean;
  /** The response body as encoded, when kept, and its media type. */
  response?: { body: string | Uint8Array; contentType: string };
}

export type Handler = (ctx: RequestContext) => Promise<Response>;
export type Filter = (ctx: RequestContext, next: Handler) => Promise<Response>;
