/**
 * How the versions of one CustomResourceDefinition convert between each other and the stored
 * form. Objects are stored in the storage version of the time they were written (their
 * `apiVersion` says which) and converted on every read to the version asked for:
 *
 * - `None`: only `apiVersion` changes; the rest of the object is kept as it is. Synchronous,
 *   so reads cost a string rewrite.
 * - `Webhook`: the CRD's conversion webhook converts (conversion_webhook.ts); a batch
 *   conversion of the registry, so that a list page or a watch event is one call.
 *
 * A CRD with a single version needs no conversion at all: every stored object is in it
 * (`status.storedVersions` must stay within `spec.versions`).
 */

import type { BatchStorageConversion, KubeObject, StorageConversion } from "../registry/mod.ts";
import { ConversionWebhook, type ConversionWebhookOptions } from "./conversion_webhook.ts";

/** The conversion of version `version` of `crd`, or undefined when none is needed. */
export function conversionOf(
  crd: KubeObject,
  version: string,
  opts: ConversionWebhookOptions,
): StorageConversion | BatchStorageConversion | undefined {
  const spec = crd.spec ?? {};
  const versions: KubeObject[] = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length < 2) return undefined;
  const group: string = spec.group;
  const storage = versions.find((v) => v?.storage === true)?.name ?? version;
  if (spec.conversion?.strategy === "Webhook") {
    return webhookConversion(new ConversionWebhook(crd, opts), group, version, storage);
  }
  return noneConversion(`${group}/${version}`, `${group}/${storage}`);
}

/** `None`: objects differ between versions only in `apiVersion`. */
export function noneConversion(served: string, stored: string): StorageConversion {
  return {
    fromStorage: (obj) => {
      obj.apiVersion = served;
      return obj;
    },
    toStorage: (obj) => ({ ...obj, apiVersion: stored }),
  };
}

/** `Webhook`: stored objects of other versions are converted by the webhook, in one call per
 * batch; what is written is converted to the storage version first. */
function webhookConversion(
  hook: ConversionWebhook,
  group: string,
  version: string,
  storage: string,
): BatchStorageConversion {
  const served = `${group}/${version}`;
  const stored = `${group}/${storage}`;
  return {
    fromStorageAll: (objs) => hook.convert(objs, served),
    toVersionAll: (objs, apiVersion) => hook.convert(objs, apiVersion),
    toStorageAsync: async (obj) => {
      if (obj.apiVersion === stored) return obj;
      const [out] = await hook.convert([obj], stored);
      return out;
    },
  };
}
