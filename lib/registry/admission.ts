/**
 * The registry's side of admission: the attributes of one write, made from the resource's
 * definition and the request's context. Every write path (create, update, patch, apply,
 * delete) runs the chain of its {@link RegistryCore} through these.
 */

import type { AdmissionAttributes, Operation } from "../admission/mod.ts";
import { StatusError } from "../api/mod.ts";
import type { KubeObject, StrategyContext } from "./definition.ts";
import type { RegistryCore } from "./core.ts";

/** Who the server's own writes are from (kube's loopback identity). */
export const SERVER_CONTEXT: StrategyContext = {
  user: { username: "system:apiserver", groups: ["system:masters"] },
};

/**
 * A validation error of an object admission webhooks changed names them: the client sent
 * something valid, and needs to know who made it invalid.
 */
export function blameMutations(err: unknown, attrs: AdmissionAttributes): unknown {
  const by = attrs.mutatedBy ?? [];
  if (!(err instanceof StatusError) || err.code !== 422 || !by.length) return err;
  const webhooks = [...new Set(by)].map((n) => JSON.stringify(n)).join(", ");
  return new StatusError(
    err.code,
    err.reason,
    `${err.message} (the object was changed by admission webhook ${webhooks})`,
    { details: err.details, headers: err.headers },
  );
}

export interface AdmissionRequest {
  operation: Operation;
  namespace: string;
  name: string;
  ctx: StrategyContext;
  dryRun?: boolean;
  subresource?: string;
  object?: KubeObject;
  oldObject?: KubeObject;
}

export function admissionAttributes(core: RegistryCore, r: AdmissionRequest): AdmissionAttributes {
  const { def } = core;
  return {
    operation: r.operation,
    resource: { group: def.group, version: def.version, resource: def.plural },
    subresource: r.subresource ?? "",
    kind: { group: def.group, version: def.version, kind: def.kind },
    namespace: def.namespaced ? r.namespace : "",
    name: r.name,
    object: r.object,
    oldObject: r.oldObject,
    user: r.ctx.user,
    dryRun: r.dryRun === true,
    authorize: r.ctx.authorize,
    // Into the request's own warnings when it has them: they reach the client even when the
    // write fails later.
    warnings: r.ctx.warnings ?? [],
    // Into the request's audit event when it is audited.
    auditAnnotations: r.ctx.auditAnnotations ?? {},
  };
}
