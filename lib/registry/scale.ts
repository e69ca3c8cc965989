/**
 * The `scale` subresource: an `autoscaling/v1` Scale made from, and written back to, three
 * paths of the object ({@link ScalePaths}), as Kubernetes serves it for custom resources.
 *
 * - GET answers the object's Scale: `spec.replicas` from `specReplicasPath` (500 when the
 *   object has none; left out when 0, as in kube's JSON), `status.replicas` from `statusReplicasPath` (0 when absent),
 *   `status.selector` from `labelSelectorPath`, and the object's name, namespace, uid,
 *   resourceVersion and creationTimestamp.
 * - PUT takes a Scale; a JSON Patch or merge patch is applied to the object's Scale. Only
 *   `spec.replicas` is taken: it goes to `specReplicasPath` of the stored object, which is
 *   then written as an update through the `scale` subresource (strategy, managed fields under
 *   subresource `scale`, admission, validation). A `metadata.resourceVersion` in the Scale
 *   makes the write conditional. The answer is the written object's Scale.
 * - Server-side apply applies an autoscaling/v1 Scale configuration to the object's Scale,
 *   whose managed fields are the object's mapped onto `spec.replicas` (lib/apply
 *   scale_fields.ts): ownership and conflicts of the replicas field are the object's, and the
 *   applier's entry (subresource `scale`) is recorded on the object. Strategic merge patch is
 *   refused, as kube refuses it for custom resources.
 */

import {
  badRequest,
  conflict,
  internalError,
  isJsonObject,
  notFound,
  OBJECT_MODIFIED,
  rfc3339,
  unsupportedMediaType,
} from "../api/mod.ts";
import {
  applyConfig,
  parentManagedFields,
  SCALE_GROUP_VERSION,
  type ScaleFieldsContext,
  scaleManagedFields,
} from "../apply/mod.ts";
import type { KubeObject, ScalePaths, StrategyContext } from "./definition.ts";
import { MAX_UPDATE_RETRIES, type RegistryCore } from "./core.ts";
import { patchedObject, type PatchType } from "./patching.ts";
import { replaceObject } from "./update.ts";
import type { UpdateOptions, WriteResult } from "./write_options.ts";
import { UNTYPED } from "../schema/mod.ts";

export const SCALE_API_VERSION = "autoscaling/v1";
export const SCALE_KIND = "Scale";

/** The patch types `/scale` takes, in kube's order (no strategic merge patch, as for custom
 * resources). */
export const SCALE_PATCH_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/apply-patch+yaml",
];

/** A write of `/scale`: a PUT's Scale, a patch of the current Scale, or an apply
 * configuration of a Scale (`force`: take the replicas field from its other managers). */
export type ScaleChange =
  | { type: "put"; body: unknown }
  | { type: Exclude<PatchType, "apply">; body: unknown }
  | { type: "apply"; body: unknown; force: boolean };

/** The manager of writes that name none (as the registry's own). */
const DEFAULT_MANAGER = "platform";

const INT32_MAX = 2147483647;
/** The replicas of a Scale whose object has none (kube's marker: the smallest int32). */
const SCALE_REPLICAS_UNSET = -INT32_MAX - 1;

/** An apply configuration of a Scale: kind Scale in autoscaling/v1, without managedFields,
 * naming this object if it names one (kube's checks and messages for apply). */
function checkScaleApplyConfig(body: unknown, name: string): void {
  if (!isJsonObject(body)) throw badRequest(`the apply configuration must be a Scale object`);
  if (body.apiVersion !== SCALE_API_VERSION) {
    throw badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${
        body.apiVersion ?? ""
      }, expected: ${SCALE_API_VERSION}`,
    );
  }
  if (body.kind !== SCALE_KIND) {
    throw badRequest(
      `Incorrect kind specified in apply patch. Specified patch kind: ${
        body.kind ?? ""
      }, expected: ${SCALE_KIND}`,
    );
  }
  if (body.metadata === undefined || body.metadata === null) body.metadata = {};
  if (!isJsonObject(body.metadata)) throw badRequest("metadata must be an object");
  if (body.metadata.managedFields !== undefined && body.metadata.managedFields !== null) {
    throw badRequest("metadata.managedFields must be nil");
  }
  // Before any conflict: the name, and replicas that are an int32 when given.
  if (isJsonObject(body.spec) && body.spec.replicas !== undefined) replicasOf(body, name);
  else if (body.metadata.name && body.metadata.name !== name) {
    throw badRequest(
      `the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`,
    );
  }
}

/** The segments of a simple JSON path (`.spec.replicas` -> `["spec", "replicas"]`). */
function segments(path: string): string[] {
  return path.replace(/^\./, "").split(".");
}

function valueAt(obj: unknown, path: string): unknown {
  let v = obj;
  for (const s of segments(path)) {
    if (!isJsonObject(v)) return undefined;
    v = v[s];
  }
  return v;
}

function setAt(obj: KubeObject, path: string, value: unknown): void {
  const parts = segments(path);
  let v: KubeObject = obj;
  for (const s of parts.slice(0, -1)) {
    if (!isJsonObject(v[s])) v[s] = {};
    v = v[s];
  }
  v[parts[parts.length - 1]] = value;
}

/** An integer at `path`, 0 when absent; a 500 when something else is there (validation keeps
 * that from being stored). */
function replicasAt(obj: KubeObject, path: string): number | undefined {
  const v = valueAt(obj, path);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw internalError(`${path} accessor error: ${JSON.stringify(v)} is not an integer`);
  }
  return v;
}

/** The Scale of `obj`, and whether it has spec replicas at all. */
export function scaleOf(obj: KubeObject, paths: ScalePaths): { scale: KubeObject; found: boolean } {
  const spec = replicasAt(obj, paths.specReplicasPath);
  const status = replicasAt(obj, paths.statusReplicasPath) ?? 0;
  const selector = paths.labelSelectorPath ? valueAt(obj, paths.labelSelectorPath) : undefined;
  const m = obj.metadata ?? {};
  const metadata: KubeObject = { name: m.name };
  for (const f of ["namespace", "uid", "resourceVersion", "creationTimestamp"]) {
    if (m[f] !== undefined) metadata[f] = m[f];
  }
  const scale: KubeObject = {
    kind: SCALE_KIND,
    apiVersion: SCALE_API_VERSION,
    metadata,
    // As kube's JSON: spec replicas are left out when 0, status replicas never.
    spec: spec ? { replicas: spec } : {},
    status: { replicas: status },
  };
  if (typeof selector === "string" && selector) scale.status.selector = selector;
  return { scale, found: spec !== undefined };
}

function pathsOf(core: RegistryCore): ScalePaths {
  const paths = core.def.scale;
  if (!paths) throw internalError(`${core.def.plural} has no scale subresource`);
  return paths;
}

/** The Scale of one object (404 when missing; 500 when it has no spec replicas). */
export async function getScale(
  core: RegistryCore,
  namespace: string,
  name: string,
): Promise<KubeObject> {
  const paths = pathsOf(core);
  const kv = await core.read(() => core.store.get(core.key(namespace, name)));
  if (!kv) throw notFound(core.gr, name);
  const { scale, found } = scaleOf(core.decode(kv), paths);
  if (!found) {
    throw internalError(
      `the spec replicas field ${JSON.stringify(paths.specReplicasPath)} does not exist`,
    );
  }
  return scale;
}

/** A Scale body: of kind Scale in autoscaling/v1 (when named), of this object, with integer
 * replicas. Returns the replicas (a PUT without them means 0, as a Go int32 decodes). */
function replicasOf(scale: unknown, name: string): number {
  if (!isJsonObject(scale)) throw badRequest("the body of the request must be a Scale object");
  if (scale.kind !== undefined && scale.kind !== "" && scale.kind !== SCALE_KIND) {
    throw badRequest(`wrong object passed to Scale update: kind ${JSON.stringify(scale.kind)}`);
  }
  if (
    scale.apiVersion !== undefined && scale.apiVersion !== "" &&
    scale.apiVersion !== SCALE_API_VERSION
  ) {
    throw badRequest(
      `the API version in the data (${scale.apiVersion}) does not match the expected API version (${SCALE_API_VERSION})`,
    );
  }
  const meta = isJsonObject(scale.metadata) ? scale.metadata : {};
  if (meta.name && meta.name !== name) {
    throw badRequest(
      `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
    );
  }
  const spec = scale.spec ?? {};
  const replicas = isJsonObject(spec) ? spec.replicas ?? 0 : spec;
  if (
    typeof replicas !== "number" || !Number.isInteger(replicas) ||
    Math.abs(replicas) > INT32_MAX + 1
  ) {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: spec.replicas: ${
        JSON.stringify(replicas)
      } is not an int32`,
    );
  }
  return replicas;
}

/**
 * A PUT or patch of `/scale` (see the module comment). `opts.subresource` is set to `scale`.
 * 404 when the object is missing (a scale write never creates), 409 when a named
 * resourceVersion is stale, 400 for a body that is no Scale, 415 for other patch types.
 */
export async function updateScale(
  core: RegistryCore,
  namespace: string,
  name: string,
  change: ScaleChange,
  ctx: StrategyContext,
  opts: UpdateOptions,
): Promise<WriteResult> {
  const paths = pathsOf(core);
  if (change.type === "strategic") {
    throw unsupportedMediaType("application/strategic-merge-patch+json", SCALE_PATCH_TYPES);
  }
  if (change.type === "apply") checkScaleApplyConfig(change.body, name);
  const fieldsCtx: ScaleFieldsContext = {
    specReplicasPath: paths.specReplicasPath,
    apiVersion: core.apiVersion,
  };
  const key = core.key(namespace, name);
  for (let attempt = 0;; attempt++) {
    const kv = await core.read(() => core.store.get(key));
    if (!kv) throw notFound(core.gr, name);
    const old = core.decode(kv);
    const { scale: current, found } = scaleOf(old, paths);
    let next: unknown = change.body;
    /** Apply only: the object's managed fields, mapped back from the applied Scale. */
    let applied: { managedFields: unknown[] | undefined } | undefined;
    if (change.type === "apply") {
      current.metadata.managedFields = scaleManagedFields(old.metadata.managedFields, fieldsCtx);
      // kube marks missing replicas with an out-of-range value the apply must replace.
      if (!found) current.spec.replicas = SCALE_REPLICAS_UNSET;
      next = applyConfig(current, change.body as KubeObject, {
        type: UNTYPED,
        manager: opts.manager ?? DEFAULT_MANAGER,
        apiVersion: SCALE_GROUP_VERSION,
        subresource: "scale",
        now: rfc3339(core.clock.now()),
        ignoredFields: ["status"],
        force: change.force,
      });
      const scale = next as KubeObject;
      if (scale.spec?.replicas === SCALE_REPLICAS_UNSET) {
        throw badRequest(
          `the spec replicas field ${JSON.stringify(paths.specReplicasPath)} cannot be empty`,
        );
      }
      applied = {
        managedFields: parentManagedFields(
          old.metadata.managedFields,
          scale.metadata?.managedFields,
          fieldsCtx,
        ),
      };
    } else if (change.type !== "put") {
      const patched = patchedObject(change.type, current, change.body, UNTYPED);
      next = patched;
      // Without spec replicas, a patch that sets none has nothing to write.
      if (!found && (!isJsonObject(patched.spec) || patched.spec.replicas === undefined)) {
        throw badRequest(
          `the spec replicas field ${JSON.stringify(paths.specReplicasPath)} cannot be empty`,
        );
      }
    }
    const replicas = replicasOf(next, name);
    // An apply's precondition is its configuration's (the applied Scale keeps the current).
    const named = change.type === "apply" ? change.body : next;
    const wanted = isJsonObject(named) && isJsonObject(named.metadata)
      ? named.metadata.resourceVersion
      : undefined;
    if (wanted && wanted !== old.metadata.resourceVersion) {
      throw conflict(core.gr, name, OBJECT_MODIFIED);
    }
    const input = structuredClone(old);
    delete input.metadata.resourceVersion;
    setAt(input, paths.specReplicasPath, replicas);
    if (applied) input.metadata.managedFields = applied.managedFields;
    const res = await replaceObject(core, kv, old, input, ctx, { ...opts, subresource: "scale" }, {
      conditional: !!wanted,
      applied: applied !== undefined,
      lastAttempt: attempt >= MAX_UPDATE_RETRIES,
    });
    if (res) return { object: scaleOf(res.object, paths).scale, warnings: res.warnings };
  }
}
