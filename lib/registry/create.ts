/**
 * Creates: the object to store is built from the client's body (name or generated name, uid,
 * creation timestamp, generation; server-owned fields never come from the client), prepared
 * and validated, admitted (mutating admission before validation, validating after), given
 * what it reserves from shared pools
 * (the strategy's `beginCreate`), then stored with one Store call.
 */

import { alreadyExists, generateName, rfc3339 } from "../api/mod.ts";
import { trackUpdate } from "../apply/mod.ts";
import { isStoreError } from "../storage/mod.ts";
import type { KubeObject, StrategyContext } from "./definition.ts";
import type { RegistryCore } from "./core.ts";
import { admissionAttributes, blameMutations } from "./admission.ts";
import { managerContext } from "./managed_fields.ts";
import { checkBody, checkTypes, validateObject } from "./validation.ts";
import type { CreateOptions, WriteResult } from "./write_options.ts";

const MAX_GENERATE_ATTEMPTS = 8;

/** Metadata only the server sets: dropped from a create's body. */
const SERVER_FIELDS = [
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "generation",
  "selfLink",
];

/**
 * Creates `body` in `namespace` (see `ResourceRegistry.create`). `how.applied`: the body is
 * what an apply made, its managed fields already computed (otherwise they are tracked here).
 */
export async function createObject(
  core: RegistryCore,
  namespace: string,
  body: KubeObject,
  ctx: StrategyContext,
  opts: CreateOptions,
  how: { applied: boolean } = { applied: false },
): Promise<WriteResult> {
  const { def } = core;
  const obj = checkBody(core, body);
  const meta = obj.metadata;
  if (def.namespaced) meta.namespace = namespace;
  else delete meta.namespace;
  // Server-owned fields are never taken from the client on create.
  for (const f of SERVER_FIELDS) delete meta[f];
  if (meta.name === "") delete meta.name;
  const generated = !meta.name && typeof meta.generateName === "string" && meta.generateName;
  if (generated) meta.name = generateName(meta.generateName);
  meta.uid = crypto.randomUUID();
  meta.creationTimestamp = rfc3339(core.clock.now());
  meta.generation = 1;
  const typeCheck = checkTypes(core, obj);
  def.strategy?.prepareForCreate?.(obj, ctx);
  def.strategy?.applyDefaults?.(obj);
  if (!how.applied) trackUpdate(undefined, obj, managerContext(core, opts, undefined, obj));
  const admission = admissionAttributes(core, {
    operation: "CREATE",
    namespace,
    name: meta.name ?? "",
    ctx,
    dryRun: opts.dryRun,
    object: obj,
  });
  await core.admission.admit(admission);
  if (admission.mutatedBy?.length) def.strategy?.applyDefaults?.(obj);
  const warnings = await validateObject(
    core,
    obj,
    opts,
    async () => await def.strategy?.validateCreate?.(obj, ctx) ?? [],
    // A webhook's change is checked again in full.
    { typeCheck: admission.mutatedBy?.length ? undefined : typeCheck },
  ).catch((err) => Promise.reject(blameMutations(err, admission)));
  await core.admission.validate(admission);
  if (!ctx.warnings) warnings.unshift(...admission.warnings);
  const reservation = await def.strategy?.beginCreate?.(obj, ctx, {
    dryRun: opts.dryRun === true,
  });
  try {
    if (opts.dryRun) {
      if (await core.store.get(core.key(namespace, meta.name))) {
        throw alreadyExists(core.gr, meta.name);
      }
      return { object: obj, warnings };
    }
    for (let attempt = 1;; attempt++) {
      try {
        const value = await core.encode(obj);
        const kv = await core.store.create(core.key(namespace, meta.name), value);
        meta.resourceVersion = String(kv.modRevision);
        await reservation?.commit();
        return { object: obj, warnings };
      } catch (err) {
        if (!isStoreError(err, "KeyExists")) throw core.translate(err, meta.name);
        if (!generated || attempt >= MAX_GENERATE_ATTEMPTS) {
          throw alreadyExists(core.gr, meta.name);
        }
        meta.name = generateName(meta.generateName);
      }
    }
  } catch (err) {
    await reservation?.revert();
    throw err;
  }
}
