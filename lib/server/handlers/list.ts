/**
 * GET of a collection: one namespace or all, with selectors and chunking, read at the
 * revision the list table of spec 01 gives for resourceVersion × resourceVersionMatch × paging:
 *
 *   no resourceVersion, or continue with none / `0`   Most Recent (or the token's snapshot)
 *   `0`                                                Any: the newest state
 *   N, no match, no limit / NotOlderThan               Not older than N: the newest state,
 *                                                      after waiting for N if it is ahead
 *   N with limit and no match / Exact                  Exact: the collection as of N (410 once
 *                                                      N left the history)
 */

import {
  emitYaml,
  encodeListBody,
  encodeMessage,
  type GroupVersionKind,
  listBodyChunks,
  negotiateOutput,
  parseIncludeObject,
  toPartialList,
  toTable,
} from "../../codec/mod.ts";
import {
  type KubeObject,
  type ListOptions,
  parseFilter,
  type ResourceRegistry,
} from "../../registry/mod.ts";
import type { RequestContext } from "../context.ts";
import { encodedResponse, isPretty, objectResponse } from "../respond.ts";
import type { KeyValue } from "../../storage/mod.ts";
import { parseResourceVersion, readOptionsOf, waitForRevision } from "./read_options.ts";
import type { ResourceScope } from "./scope.ts";
import { kubeSpelled, toKubeApiVersion } from "../../api/mod.ts";

/** Lists of more items than this are sent as the client reads them (see streamedList). */
const STREAM_ITEMS = 500;
const STREAM_CHUNK_BYTES = 64 * 1024;
const encoder = new TextEncoder();

export async function listHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), {
    allowAs: ["Table", "PartialObjectMetadataList"],
    protobuf: scope.protobuf,
  });
  const q = ctx.url.searchParams;
  const registry = scope.registry;
  const def = registry.def;
  const o = readOptionsOf(q, { watch: false, watchList: scope.watchList });
  const filter = parseFilter(def, q.get("labelSelector"), q.get("fieldSelector"));
  const opts: ListOptions = { filter, limit: o.limit };
  if (o.continue) {
    opts.continue = o.continue;
  } else if (o.resourceVersion !== "" && o.resourceVersion !== "0") {
    const rv = parseResourceVersion(o.resourceVersion);
    await waitForRevision(() => registry.currentRevision(), rv, ctx.signal);
    const exact = o.match === "Exact" || (o.match === "" && o.limit !== undefined);
    if (exact) opts.revision = rv;
    else opts.cached = true;
  } else if (o.resourceVersion === "0") {
    opts.cached = true;
  }
  // A plain list is built from per-object encodings cached by stored value; a large Table or
  // metadata list in JSON is made from the stored values as it is read.
  const fromCache = !negotiated.as && !isPretty(ctx);
  const asJson = negotiated.as !== undefined && negotiated.encoding === "json" && !isPretty(ctx);
  opts.sourcesOnly = fromCache || asJson;
  const result = await registry.list(ctx.info.namespace, opts);
  // With sourcesOnly and no filter, items are left to decode here.
  const items = () =>
    result.items.length === result.sources.length
      ? result.items
      : result.sources.map((kv) => registry.decode(kv));
  const streamItems = asJson && result.sources.length > STREAM_ITEMS;
  const itemAt = (i: number) => result.items[i] ?? registry.decode(result.sources[i]);
  const listMeta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) listMeta.continue = result.continue;
  if (result.remainingItemCount !== undefined) {
    listMeta.remainingItemCount = result.remainingItemCount;
  }
  if (negotiated.as?.kind === "PartialObjectMetadataList") {
    const { group, version } = negotiated.as;
    if (streamItems) {
      const head = toPartialList([], listMeta, `${group}/${version}`);
      const body = streamedObject(
        ctx,
        head,
        "items",
        result.sources.length,
        (i) => JSON.stringify(toPartialList([itemAt(i)], listMeta, `${group}/${version}`).items[0]),
      );
      return encodedResponse(ctx, 200, body, negotiated);
    }
    const partial = toPartialList(items(), listMeta, `${group}/${version}`);
    return objectResponse(ctx, 200, partial, negotiated);
  }
  if (negotiated.as?.kind === "Table") {
    const tableOpts = {
      apiVersion: `${negotiated.as.group}/${negotiated.as.version}`,
      listMeta,
      include: parseIncludeObject(q.get("includeObject")),
    };
    if (streamItems) {
      const head = toTable(def, [], tableOpts);
      const body = streamedObject(
        ctx,
        head,
        "rows",
        result.sources.length,
        (i) => JSON.stringify((toTable(def, [itemAt(i)], tableOpts).rows as unknown[])[0]),
      );
      return encodedResponse(ctx, 200, body, negotiated);
    }
    return objectResponse(ctx, 200, toTable(def, items(), tableOpts), negotiated);
  }
  if (fromCache) {
    // Items in the spelling of the group the client asked under, as objectResponse answers.
    const kube = ctx.kubeSpelling === true;
    const apiVersion = kube ? toKubeApiVersion(registry.apiVersion) : registry.apiVersion;
    const listKind = { apiVersion, kind: `${def.kind}List` };
    const body = negotiated.encoding === "protobuf"
      ? protobufList(registry, listKind, listMeta, result.sources, kube)
      : negotiated.encoding === "yaml"
      ? yamlList(registry, listKind, listMeta, result.sources, kube)
      : jsonList(registry, listKind, listMeta, result.sources, kube);
    return encodedResponse(ctx, 200, body, negotiated);
  }
  const list = {
    kind: `${def.kind}List`,
    apiVersion: registry.apiVersion,
    metadata: listMeta,
    items: items(),
  };
  return objectResponse(ctx, 200, list, negotiated);
}

/** `{"kind":…,"apiVersion":…,"metadata":…,"items":[…]}` from each item's cached JSON text:
 * the same text JSON.stringify gives for the whole list. */
function jsonList(
  registry: ResourceRegistry,
  list: GroupVersionKind,
  listMeta: Record<string, unknown>,
  sources: KeyValue[],
  kube: boolean,
): string | ReadableStream<Uint8Array> {
  const head = `{"kind":${JSON.stringify(list.kind)},"apiVersion":${
    JSON.stringify(list.apiVersion)
  },"metadata":${JSON.stringify(listMeta)},"items":[`;
  const item = (kv: KeyValue) => cachedJson(registry, kv, kube);
  if (sources.length > STREAM_ITEMS) return streamedList(head, sources, item, ",", "]}\n");
  return `${head}${sources.map(item).join(",")}]}\n`;
}

/** A YAML list body from each item's cached YAML, indented as a sequence entry: the same
 * document emitYaml gives for the whole list. */
function yamlList(
  registry: ResourceRegistry,
  list: GroupVersionKind,
  listMeta: Record<string, unknown>,
  sources: KeyValue[],
  kube: boolean,
): string | ReadableStream<Uint8Array> {
  const head = emitYaml({ kind: list.kind, apiVersion: list.apiVersion, metadata: listMeta });
  if (!sources.length) return `${head}items: []\n`;
  const item = (kv: KeyValue) =>
    registry.encoded.get(
      kube ? "yaml-k8s" : "yaml",
      kv,
      () => asSequenceEntry(emitYaml(decodeSpelled(registry, kv, kube))),
    );
  if (sources.length > STREAM_ITEMS) return streamedList(`${head}items:\n`, sources, item, "", "");
  return `${head}items:\n${sources.map(item).join("")}`;
}

/**
 * The JSON of `head` with its (empty) array field `field` holding `count` items made by
 * `item` as the client reads them: the same text JSON.stringify gives for the whole object
 * when `field` is the last key of `head`.
 */
function streamedObject(
  ctx: RequestContext,
  head: Record<string, unknown>,
  field: string,
  count: number,
  item: (i: number) => string,
): ReadableStream<Uint8Array> {
  // As objectResponse answers: in the client's spelling of the group.
  if (ctx.kubeSpelling) head = kubeSpelled(head);
  const text = JSON.stringify(head);
  const empty = `${JSON.stringify(field)}:[]}`;
  if (!text.endsWith(empty)) throw new Error(`streamedObject: ${field} is not the last key`);
  const indexes = Array.from({ length: count }, (_, i) => i);
  return streamedList(text.slice(0, -2), indexes, item, ",", `]}\n`);
}

/**
 * A list body made as the client reads it, about {@link STREAM_CHUNK_BYTES} at a time: a
 * client that reads slowly or not at all holds the list's snapshot (references to stored
 * values) and one chunk, never the whole body.
 */
function streamedList<T>(
  head: string,
  sources: T[],
  item: (source: T) => string,
  separator: string,
  tail: string,
): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const parts: string[] = next === 0 ? [head] : [];
      let size = 0;
      while (next < sources.length && size < STREAM_CHUNK_BYTES) {
        const text = item(sources[next]);
        parts.push(next === 0 ? text : separator + text);
        size += text.length;
        next++;
      }
      if (next === sources.length) parts.push(tail);
      controller.enqueue(encoder.encode(parts.join("")));
      if (next === sources.length) controller.close();
    },
  }, { highWaterMark: 0 });
}

/** `a: 1\nb: 2\n` -> `- a: 1\n  b: 2\n` (empty lines stay empty: block scalars keep them). */
function asSequenceEntry(yaml: string): string {
  const lines = yaml.endsWith("\n") ? yaml.slice(0, -1).split("\n") : yaml.split("\n");
  return lines.map((l, i) => (i === 0 ? `- ${l}` : l === "" ? "" : `  ${l}`)).join("\n") + "\n";
}

/** The JSON text of a stored value, made once and cached with it: GETs, lists and a watch's
 * initial events share it (the registry's own, or in Kubernetes' spelling of the group). */
export function cachedJson(registry: ResourceRegistry, kv: KeyValue, kube = false): string {
  if (!kube) return registry.jsonOf(kv);
  return registry.encoded.get(
    "json-k8s",
    kv,
    () => JSON.stringify(decodeSpelled(registry, kv, kube)),
  );
}

/** A stored value decoded, in Kubernetes' spelling of its group when `kube` (see
 * {@link kubeSpelled}). */
function decodeSpelled(registry: ResourceRegistry, kv: KeyValue, kube: boolean): KubeObject {
  const obj = registry.decode(kv);
  return kube ? kubeSpelled(obj) : obj;
}

/** The protobuf message bytes of a stored value, made once and cached with it: list bodies
 * and single-object gets share them. */
export function cachedMessage(registry: ResourceRegistry, kv: KeyValue, kube = false): Uint8Array {
  return registry.encoded.get(
    kube ? "protobuf-k8s" : "protobuf",
    kv,
    () =>
      encodeMessage(decodeSpelled(registry, kv, kube), {
        apiVersion: registry.apiVersion,
        kind: registry.def.kind,
      }),
  );
}

/** A protobuf list body from each item's cached message bytes; a large one as it is read. */
function protobufList(
  registry: ResourceRegistry,
  list: GroupVersionKind,
  listMeta: Record<string, unknown>,
  sources: KeyValue[],
  kube: boolean,
): Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> {
  const items = sources.map((kv) => cachedMessage(registry, kv, kube));
  if (sources.length <= STREAM_ITEMS) {
    return encodeListBody(list, listMeta, items) as Uint8Array<ArrayBuffer>;
  }
  const chunks = listBodyChunks(list, listMeta, items, STREAM_CHUNK_BYTES);
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  }, { highWaterMark: 0 });
}
