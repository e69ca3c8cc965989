/**
 * The registry's side of managed fields and server-side apply: what the field manager
 * tracking of one write needs to know (lib/apply does the tracking), the checks an apply
 * configuration passes before it is applied, and, for versions converted by a webhook, the
 * write seen at the other versions managers are recorded at (conversion calls).
 */

import { badRequest, rfc3339 } from "../api/mod.ts";
import {
  applyConfig,
  changesBetween,
  type FieldManagerContext,
  FieldSet,
  otherManagerVersions,
  previousApplyVersion,
  pruneAtVersion,
  unchangedAt,
  type VersionChanges,
} from "../apply/mod.ts";
import { isBatchConversion } from "./definition.ts";
import type { KubeObject } from "./definition.ts";
import type { RegistryCore } from "./core.ts";
import { checkName } from "./validation.ts";

/** The field manager of writes that name none (the server's own controllers). */
const DEFAULT_MANAGER = "platform";

/** What a `/status` write may change and own: status, plus the identity of the object. */
const STATUS_KEEPS = new Set(["apiVersion", "kind", "metadata", "status"]);

/** What managed-fields tracking needs to know about this write. */
export function managerContext(
  core: RegistryCore,
  opts: { manager?: string; subresource?: string },
  old: KubeObject | undefined,
  obj: KubeObject,
): FieldManagerContext {
  const subresource = opts.subresource ?? "";
  let ignoredFields: string[] = [];
  if (subresource === "status") {
    // /status neither changes nor owns anything but status.
    const fields = new Set([...Object.keys(old ?? {}), ...Object.keys(obj)]);
    ignoredFields = [...fields].filter((f) => !STATUS_KEEPS.has(f));
  } else if (!subresource && core.def.subresources?.includes("status")) {
    ignoredFields = ["status"];
  }
  return {
    type: core.fieldType(),
    manager: opts.manager ?? DEFAULT_MANAGER,
    apiVersion: core.apiVersion,
    subresource,
    now: rfc3339(core.clock.now()),
    ignoredFields,
    emptyObject: core.def.emptyObject,
  };
}

/** An apply configuration: an object of this kind and version, without managedFields. */
export function checkApplyConfig(core: RegistryCore, body: unknown, name: string): KubeObject {
  const { def, apiVersion } = core;
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest(`the apply configuration must be a ${def.kind} object`);
  }
  const config = body as KubeObject;
  if (config.apiVersion !== apiVersion) {
    throw badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${
        config.apiVersion ?? ""
      }, expected: ${apiVersion}`,
    );
  }
  if (config.kind !== def.kind) {
    throw badRequest(
      `Incorrect kind specified in apply patch. Specified patch kind: ${
        config.kind ?? ""
      }, expected: ${def.kind}`,
    );
  }
  if (config.metadata === undefined || config.metadata === null) config.metadata = {};
  if (typeof config.metadata !== "object" || Array.isArray(config.metadata)) {
    throw badRequest("metadata must be an object");
  }
  if (config.metadata.managedFields !== undefined && config.metadata.managedFields !== null) {
    throw badRequest("metadata.managedFields must be nil");
  }
  checkName(config, name);
  return config;
}

/**
 * `old` (as read for a write) without the managed fields recorded at versions no longer
 * served (`ResourceDefinition.obsoleteVersion`): they go on the next write, and an applier
 * whose entry was there prunes nothing (kube's obsolete versions). `old` is not changed.
 */
export function withoutObsoleteManagers(core: RegistryCore, old: KubeObject): KubeObject {
  const obsolete = core.def.obsoleteVersion;
  const entries = old.metadata?.managedFields;
  if (!obsolete || !Array.isArray(entries)) return old;
  const kept = entries.filter((e) =>
    !(typeof e?.apiVersion === "string" && obsolete(e.apiVersion))
  );
  if (kept.length === entries.length) return old;
  const metadata = { ...old.metadata };
  if (kept.length) metadata.managedFields = kept;
  else delete metadata.managedFields;
  return { ...old, metadata };
}

/**
 * For a resource whose versions convert through a webhook (their shapes may differ): the
 * write from `old` to `obj` as seen at each other version some manager of `old` is recorded
 * at, as kube's field manager compares the objects converted to each manager's version. One
 * conversion call per such version, with both objects. Undefined when there is nothing to
 * convert (no such managers, or versions of one shape).
 */
export async function changesAtOtherVersions(
  core: RegistryCore,
  old: KubeObject,
  obj: KubeObject,
  ctx: FieldManagerContext,
): Promise<Map<string, VersionChanges> | undefined> {
  const converted = await convertedToOtherVersions(core, old, obj, ctx);
  if (!converted) return undefined;
  const out = new Map<string, VersionChanges>();
  // The other version's schema is not at hand: its objects are read with this one's.
  for (const [version, [before, after]] of converted) {
    out.set(version, changesBetween(before, after, ctx));
  }
  return out;
}

/** `old` and `obj` converted to each other version `old`'s managers are recorded at, one
 * call per version; undefined when there is nothing to convert. */
async function convertedToOtherVersions(
  core: RegistryCore,
  old: KubeObject,
  obj: KubeObject,
  ctx: FieldManagerContext,
): Promise<Map<string, KubeObject[]> | undefined> {
  const conversion = shapeConversion(core);
  if (!conversion) return undefined;
  const versions = otherManagerVersions(old, ctx.apiVersion);
  if (!versions.length) return undefined;
  const out = new Map<string, KubeObject[]>();
  for (const version of versions) {
    out.set(
      version,
      await conversion.toVersionAll(
        [withApiVersion(old, core.apiVersion), withApiVersion(obj, core.apiVersion)],
        version,
      ),
    );
  }
  return out;
}

/** The conversion to other versions when they may differ in shape (a webhook). */
function shapeConversion(core: RegistryCore) {
  const conversion = core.def.storage?.conversion;
  if (!conversion || !isBatchConversion(conversion) || !conversion.toVersionAll) return undefined;
  return conversion as typeof conversion & Required<Pick<typeof conversion, "toVersionAll">>;
}

/**
 * {@link applyConfig} where managers may be recorded at versions of another shape: a first
 * pass leaves those managers be, the objects before and after are converted to their versions
 * ({@link changesAtOtherVersions}), and a second pass settles their conflicts and fields.
 */
export async function applyAcrossVersions(
  core: RegistryCore,
  old: KubeObject,
  config: KubeObject,
  ctx: FieldManagerContext & { force: boolean },
): Promise<KubeObject> {
  const conversion = shapeConversion(core);
  const others = conversion ? otherManagerVersions(old, ctx.apiVersion) : [];
  if (!conversion || !others.length) return applyConfig(old, config, ctx);
  const first = applyConfig(old, config, {
    ...ctx,
    changesAt: unchangedAt(others),
    prunedElsewhere: new FieldSet(),
  });
  const converted = (await convertedToOtherVersions(core, old, first, ctx))!;
  const changesAt = new Map<string, VersionChanges>();
  for (const [version, [before, after]] of converted) {
    changesAt.set(version, changesBetween(before, after, ctx));
  }
  // An applier last recorded at another version prunes there, as kube does: what its previous
  // apply left unowned, converted back (a second call) and compared with the first pass.
  let prunedElsewhere: FieldSet | undefined;
  const previous = previousApplyVersion(old, ctx);
  const there = previous === undefined ? undefined : converted.get(previous);
  if (previous !== undefined && there) {
    const pruned = pruneAtVersion(there[1], old, ctx, previous);
    const [back] = await conversion.toVersionAll([pruned], core.apiVersion);
    prunedElsewhere = changesBetween(first, back, ctx).removed;
  }
  return applyConfig(old, config, { ...ctx, changesAt, prunedElsewhere });
}

function withApiVersion(obj: KubeObject, apiVersion: string): KubeObject {
  return { ...obj, apiVersion, kind: obj.kind };
}
