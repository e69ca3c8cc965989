/**
 * What an admission plugin sees of a write (kube's `admission.Attributes`): the operation, the
 * resource and subresource it targets, the object being written and the one it replaces, who
 * asks, and whether the write is a dry run.
 */

import type { KubeObject, UserInfo } from "../api/mod.ts";
import type { Attributes } from "../auth/mod.ts";

/** The operations admission is called for. `CONNECT` is kube's, for proxy-like
 * subresources; nothing here issues it yet. */
export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

export interface AdmissionAttributes {
  operation: Operation;
  /** The resource in its canonical group, the version the request named. */
  resource: { group: string; version: string; resource: string };
  /** `""` for the main resource; `status`, `approval`, `scale`, … */
  subresource: string;
  kind: { group: string; version: string; kind: string };
  /** `""` for cluster-scoped resources. */
  namespace: string;
  /** The object's name (on a create with `generateName`, possibly `""`). */
  name: string;
  /** The object as it will be stored: CREATE and UPDATE. The mutating phase may change it. */
  object?: KubeObject;
  /** The stored object being replaced (UPDATE) or deleted (DELETE). */
  oldObject?: KubeObject;
  user: UserInfo;
  dryRun: boolean;
  /**
   * Whether the requesting user may also do something else (kube's plugins call the
   * authorizer with the request's user). Absent: the server's own write, allowed.
   */
  authorize?: (attributes: Omit<Attributes, "user">) => Promise<boolean>;
  /** Warnings for the client (`Warning` headers); plugins append. */
  warnings: string[];
  /** The webhooks that changed the object, in order (a validation error then names them). */
  mutatedBy?: string[];
  /** Audit annotations plugins add (a webhook's keyed `<webhook name>/<key>`). */
  auditAnnotations: Record<string, string>;
}
