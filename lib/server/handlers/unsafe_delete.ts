/**
 * The DELETE side of kube's AllowUnsafeMalformedObjectDeletion gate (KEP-3926): the
 * `ignoreStoreReadErrorWithClusterBreakingPotential` delete option, as kube's delete handler
 * treats it. Gate off: the option is dropped (an ordinary delete). Gate on: the user must also
 * be allowed the `unsafe-delete-ignore-read-errors` verb on the object (asked of the request's
 * authorizer), the request is audited with kube's annotation, and the registry removes the
 * object unread (registry/unsafe_delete.ts). A collection delete refuses the option.
 */

import { badRequest, forbidden, invalid, type StatusError } from "../../api/mod.ts";
import { type KubeObject, UNSAFE_DELETE_OPTION } from "../../registry/mod.ts";
import type { RequestContext } from "../context.ts";
import { parseQueryBool } from "../request_info.ts";

/** The verb the unsafe delete needs besides `delete`. */
export const UNSAFE_DELETE_VERB = "unsafe-delete-ignore-read-errors";

/**
 * Whether the request asks for the unsafe delete: the query parameter, else the body's field.
 * Always false while the gate is off (kube drops the option then). 400 for a body value that
 * is not a boolean, as kube's decoding of DeleteOptions answers.
 */
export function unsafeDeleteRequested(
  ctx: RequestContext,
  body: KubeObject,
  gateEnabled: boolean,
): boolean {
  const raw = body[UNSAFE_DELETE_OPTION];
  if (raw !== undefined && raw !== null && typeof raw !== "boolean") {
    throw badRequest(
      `json: cannot unmarshal ${typeof raw === "number" ? "number" : typeof raw} into Go ` +
        `struct field DeleteOptions.${UNSAFE_DELETE_OPTION} of type bool`,
    );
  }
  if (!gateEnabled) return false;
  const query = parseQueryBool(ctx.url.searchParams.get(UNSAFE_DELETE_OPTION));
  return (query ?? raw) === true;
}

/**
 * The checks of an unsafe delete of one object before it runs: not on a subresource, and the
 * user may do `unsafe-delete-ignore-read-errors` on the object. Throws kube's Forbidden.
 * Allowed when no authorizer ran (as every secondary check of the server).
 */
export async function authorizeUnsafeDelete(ctx: RequestContext): Promise<void> {
  const info = ctx.info;
  const gr = { group: info.group, resource: info.resource };
  // kube annotates the audit event of every delete that asks for it, allowed or not.
  if (ctx.audit) ctx.audit.annotations["apiserver.k8s.io/unsafe-delete-ignore-read-error"] = "";
  if (info.subresource) {
    throw forbidden(
      gr,
      info.name,
      `${UNSAFE_DELETE_OPTION} delete option is not allowed on a subresource or non-resource request`,
    );
  }
  if (!ctx.authorizer || !ctx.user) return;
  let res;
  try {
    res = await ctx.authorizer.authorize({
      user: ctx.user,
      verb: UNSAFE_DELETE_VERB,
      resourceRequest: true,
      namespace: info.namespace,
      apiGroup: info.group,
      apiVersion: info.version,
      resource: info.resource,
      name: info.name,
    });
  } catch (err) {
    throw forbidden(
      gr,
      info.name,
      `error while checking permission for "${UNSAFE_DELETE_VERB}", ${(err as Error).message}`,
    );
  }
  if (res.decision === "Allow") return;
  throw forbidden(
    gr,
    info.name,
    `not permitted to do "${UNSAFE_DELETE_VERB}", reason: ${res.reason ?? ""}`,
  );
}

/** kube's refusal of the option on a collection delete. */
export function unsafeDeleteCollectionError(): StatusError {
  return invalid("DeleteOptions", "meta.platform.io", "", [{
    type: "Invalid",
    field: UNSAFE_DELETE_OPTION,
    value: true,
    detail: "is not allowed with DELETECOLLECTION, try again after removing the option",
  }]);
}
