/**
 * Metadata-only forms (`Accept: application/json;as=PartialObjectMetadata;g=meta.platform.io;v=v1`
 * and `…as=PartialObjectMetadataList`), for clients that need names, labels and versions
 * without the objects' contents.
 */

import type { KubeObject } from "../api/mod.ts";

/** `{kind: PartialObjectMetadata, apiVersion: <group>/<version>, metadata}`. */
export function toPartial(obj: KubeObject, apiVersion: string): KubeObject {
  return { kind: "PartialObjectMetadata", apiVersion, metadata: obj.metadata ?? {} };
}

/** A PartialObjectMetadataList of `items` with the collection's list metadata. */
export function toPartialList(
  items: KubeObject[],
  listMeta: Record<string, unknown>,
  apiVersion: string,
): KubeObject {
  return {
    kind: "PartialObjectMetadataList",
    apiVersion,
    metadata: listMeta,
    items: items.map((o) => toPartial(o, apiVersion)),
  };
}
