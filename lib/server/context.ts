/** The per-request context that filters fill in and handlers read. */

import type { RequestInfo } from "./request_info.ts";
import type { Attributes } from "../auth/authorizer.ts";

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface RequestContext {
  req: Request;
  url: URL;
  info: RequestInfo;
  /** Set by authentication; absent for anonymous requests to always-allowed paths. */
  user?: UserInfo;
  /** Collected `Warning` headers. */
  warnings: string[];
  /**
   * Authorizes one more verb on the addressed resource, for requests whose verb depends on
   * what the handler finds (an apply that creates needs `create` besides `patch`). Set by the
   * authorization filter; absent means everything is allowed.
   */
  authorizeVerb?: (verb: string) => Promise<void>;
  /**
   * Asks the authorizer about other attributes for this request's user (a CSR approval needs
   * `approve` on its signer). Set by the authorization filter; absent means allowed.
   */
  authorize?: (attributes: Omit<Attributes, "user">) => Promise<boolean>;
  /** The client addressed the API group by its Kubernetes name (`certificates.k8s.io`), as
   * kube's typed clients do: bodies are read and answered in that spelling. */
  kubeSpelling?: boolean;
  /** Aborted when the client goes away or the server shuts down. */
  signal: AbortSignal;
}

export type Handler = (ctx: RequestContext) => Promise<Response>;
export type Filter = (ctx: RequestContext, next: Handler) => Promise<Response>;
