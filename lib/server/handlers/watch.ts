/**
 * Watch: a chunked stream of newline-delimited `{type, object}` events (spec 01, Watch
 * semantics and Streaming lists).
 *
 *   resourceVersion unset or `0`   synthetic ADDED events for the current state, then changes
 *   N                              the changes after N (410 ERROR event once N left the history)
 *   sendInitialEvents=true         (WatchList gate) ADDED events for the state not older than N,
 *                                  then a BOOKMARK annotated `platform.io/initial-events-end`
 *                                  (with allowWatchBookmarks), then changes
 *
 * With `allowWatchBookmarks=true` an idle stream gets a BOOKMARK (only
 * `metadata.resourceVersion`) once it has been quiet for a second and the store has moved on,
 * and at least once a minute. A watcher too slow to keep up is ended without an error (the
 * client resumes from the last version it saw). `timeoutSeconds` ends the stream cleanly. With
 * many streams open, each batches its events over a short window (see watch_pacing.ts).
 */

import { badRequest, expired, FieldSelector, kubeSpelled, StatusError } from "../../api/mod.ts";
import {
  encodeWatchEvent,
  negotiateOutput,
  parseIncludeObject,
  toPartial,
  toTable,
} from "../../codec/mod.ts";
import {
  type KubeObject,
  parseFilter,
  type RegistryWatch,
  type ResourceRegistry,
  type WatchEvent,
} from "../../registry/mod.ts";
import { isStoreError, type KeyValue } from "../../storage/mod.ts";
import type { RequestContext } from "../context.ts";
import { parseResourceVersion, readOptionsOf, waitForRevision } from "./read_options.ts";
import type { ResourceScope } from "./scope.ts";
import { cachedJson } from "./list.ts";
import { watchMeter } from "./watch_metrics.ts";

/** A bookmark goes out after this much quiet, if the store has moved on. */
const BOOKMARK_IDLE_MS = 1000;
/** ... and after this long in any case. */
const BOOKMARK_MAX_INTERVAL_MS = 60_000;
/** Events already waiting are sent together, up to about this many bytes per write. */
const BATCH_BYTES = 64 * 1024;
/** The annotation of the bookmark that ends the initial events of a streaming list. */
export const INITIAL_EVENTS_END = "platform.io/initial-events-end";

type StreamEvent =
  | WatchEvent
  | { type: "BOOKMARK"; object: KubeObject }
  | { type: "ERROR"; object: unknown };

const encoder = new TextEncoder();
/** Encoded JSON event lines, per shared event object and type: one encoding for all watchers. */
const encodedEvents = new WeakMap<object, Map<string, Uint8Array>>();

function encodeJson(ev: StreamEvent, kube: boolean): Uint8Array {
  let byType = encodedEvents.get(ev.object as object);
  if (!byType) encodedEvents.set(ev.object as object, byType = new Map());
  const key = kube ? `k8s ${ev.type}` : ev.type;
  let bytes = byType.get(key);
  if (!bytes) {
    const object = kube ? kubeSpelled(ev.object as KubeObject) : ev.object;
    bytes = encoder.encode(JSON.stringify({ type: ev.type, object }) + "\n");
    byType.set(key, bytes);
  }
  return bytes;
}

/** Protobuf watch frames, cached like the JSON lines. */
const protobufEvents = new WeakMap<object, Map<string, Uint8Array>>();

function encodeProtobuf(ev: StreamEvent, kube: boolean): Uint8Array {
  let byType = protobufEvents.get(ev.object as object);
  if (!byType) protobufEvents.set(ev.object as object, byType = new Map());
  const key = kube ? `k8s ${ev.type}` : ev.type;
  let bytes = byType.get(key);
  if (!bytes) {
    bytes = encodeWatchEvent(
      ev.type,
      (kube ? kubeSpelled(ev.object as KubeObject) : ev.object) as object,
    );
    byType.set(key, bytes);
  }
  return bytes;
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function sizeOf(chunks: Uint8Array[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}

function bookmark(registry: ResourceRegistry, revision: number, end = false): StreamEvent {
  const metadata: KubeObject["metadata"] = { resourceVersion: String(revision) };
  if (end) metadata.annotations = { [INITIAL_EVENTS_END]: "true" };
  return {
    type: "BOOKMARK",
    object: { kind: registry.def.kind, apiVersion: registry.apiVersion, metadata },
  };
}

/** `timeoutSeconds`, else a random time between `--min-request-timeout` and twice that, as
 * kube spreads the ends of watches that name no timeout (so their clients do not all come back
 * at once). */
function timeoutOf(q: URLSearchParams, minRequestTimeoutS: number): number {
  const v = q.get("timeoutSeconds");
  const n = v === null || v === "" ? 0 : Number(v);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid timeoutSeconds: "${v}"`);
  return n || minRequestTimeoutS * (1 + Math.random());
}

export async function watchHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), {
    allowAs: ["Table", "PartialObjectMetadata"],
    protobuf: scope.protobuf,
    yaml: false,
  });
  const q = ctx.url.searchParams;
  const registry = scope.registry;
  const pacer = scope.watchPacer;
  const def = registry.def;
  const o = readOptionsOf(q, { watch: true, watchList: scope.watchList });
  let filter = parseFilter(def, q.get("labelSelector"), q.get("fieldSelector"));
  if (ctx.info.name) {
    // A watch on one object (/watch/…/{name}) is a watch on its name, which it was authorized
    // as: a field selector may only repeat that name (kube's rule and message).
    const fields = filter?.fields;
    if (fields && fields.requiresExactMatch("metadata.name") !== ctx.info.name) {
      throw badRequest("fieldSelector metadata.name doesn't match requested name");
    }
    if (!fields) {
      const byName = new FieldSelector([
        { field: "metadata.name", operator: "=", value: ctx.info.name },
      ]);
      filter = { ...filter, fields: byName };
    }
  }
  const timeoutS = timeoutOf(q, scope.minRequestTimeoutS);
  const current = () => registry.currentRevision();

  // Where the stream starts, and what it sends before the changes.
  const rv = o.resourceVersion;
  const given = rv !== "" && rv !== "0";
  if (given) await waitForRevision(current, parseResourceVersion(rv), ctx.signal);
  // The initial state as stored values: shared with the store, decoded or encoded only as
  // the client reads them.
  let initial: KeyValue[] = [];
  let afterRevision: number;
  let initialEventsEnd = false;
  if (o.sendInitialEvents === true || (o.sendInitialEvents === undefined && !given)) {
    const list = await registry.list(ctx.info.namespace, { filter, sourcesOnly: true });
    initial = list.sources;
    afterRevision = Number(list.resourceVersion);
    initialEventsEnd = o.sendInitialEvents === true && o.allowWatchBookmarks;
  } else {
    afterRevision = given ? parseResourceVersion(rv) : current();
  }

  const include = parseIncludeObject(q.get("includeObject"));
  const asTable = negotiated.as?.kind === "Table";
  const asPartial = negotiated.as?.kind === "PartialObjectMetadata";
  const protobuf = negotiated.encoding === "protobuf";
  // Objects in the spelling of the group the client watches under.
  const kube = ctx.kubeSpelling === true;
  const render = (ev: StreamEvent): Uint8Array => {
    if (protobuf) return encodeProtobuf(ev, kube);
    if (ev.type === "ERROR" || ev.type === "BOOKMARK") return encodeJson(ev, kube);
    const object = ev.object as KubeObject;
    if (asPartial) {
      const partial = toPartial(object, `${negotiated.as!.group}/${negotiated.as!.version}`);
      return encoder.encode(JSON.stringify({ type: ev.type, object: partial }) + "\n");
    }
    if (!asTable) return encodeJson(ev, kube);
    const table = toTable(def, [object], {
      apiVersion: `${negotiated.as!.group}/${negotiated.as!.version}`,
      listMeta: { resourceVersion: object.metadata?.resourceVersion },
      include,
    });
    return encoder.encode(JSON.stringify({ type: ev.type, object: table }) + "\n");
  };

  /** An ADDED event of the initial state; plain JSON from the registry's cached encoding. */
  const renderAdded = (kv: KeyValue): Uint8Array => {
    if (protobuf || asTable || asPartial) {
      return render({ type: "ADDED", object: registry.decode(kv) });
    }
    const json = cachedJson(registry, kv, kube);
    return encoder.encode(`{"type":"ADDED","object":${json}}\n`);
  };
  const meter = scope.metrics && watchMeter(scope.metrics, ctx, registry);
  let initialSent = 0;
  let initialPending = initial.length > 0 || initialEventsEnd;
  const abort = new AbortController();
  const onAbort = () => cleanup();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => abort.abort(), timeoutS * 1000);
  let events: RegistryWatch | undefined;
  let next: Promise<IteratorResult<WatchEvent>> | undefined;
  let tick: ReturnType<typeof setTimeout> | undefined;
  let wakeTick: (() => void) | undefined;
  let closed = false;
  const cleanup = () => {
    if (!closed) {
      pacer.closed();
      meter?.closed();
    }
    closed = true;
    clearTimeout(timer);
    clearTimeout(tick);
    wakeTick?.();
    ctx.signal.removeEventListener("abort", onAbort);
    abort.abort();
  };
  /** When (performance.now()) the last batch of events went out. */
  let lastWrite = -Infinity;
  // The revision everything sent so far is complete up to; when to consider a bookmark next.
  let sentRevision = afterRevision;
  let checkAt = Date.now() + BOOKMARK_IDLE_MS;
  let lastBookmark = Date.now();
  const TICK = Symbol("tick");
  // One timer at a time, left running while events flow: it fires at the time it was armed
  // for, and a check that finds `checkAt` moved on just re-arms (no timer per event).
  let ticking: Promise<typeof TICK> | undefined;
  const nextTick = () =>
    ticking ??= new Promise<typeof TICK>((resolve) => {
      wakeTick = () => resolve(TICK);
      tick = setTimeout(() => {
        ticking = undefined;
        resolve(TICK);
      }, Math.max(0, checkAt - Date.now()));
    });
  const close = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    cleanup();
    try {
      controller.close();
    } catch {
      // Already cancelled by the client.
    }
  };

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      pacer.opened();
      meter?.opened();
      try {
        events = registry.watch(ctx.info.namespace, {
          afterRevision,
          filter,
          signal: abort.signal,
        });
      } catch (err) {
        controller.enqueue(render({ type: "ERROR", object: watchError(err, afterRevision) }));
        close(controller);
      }
    },
    async pull(controller) {
      if (!events) return;
      // The initial state goes out as the client reads it, a batch at a time, so a client
      // that does not read holds no copy of it in the server.
      if (initialPending) {
        const chunks: Uint8Array[] = [];
        let size = 0;
        while (initialSent < initial.length && size < BATCH_BYTES) {
          const bytes = renderAdded(initial[initialSent++]);
          chunks.push(bytes);
          size += bytes.length;
        }
        if (initialSent === initial.length) {
          if (initialEventsEnd) chunks.push(render(bookmark(registry, afterRevision, true)));
          initialPending = false;
          initial = [];
        }
        meter?.sent(chunks.length);
        controller.enqueue(chunks.length === 1 ? chunks[0] : concat(chunks, sizeOf(chunks)));
        return;
      }
      try {
        for (;;) {
          // Under load events are usually waiting already: take one without a promise.
          const ready = next ? undefined : events.poll();
          if (!ready) next ??= events.next();
          const r: IteratorResult<WatchEvent> | typeof TICK = ready
            ? { value: ready, done: false }
            : o.allowWatchBookmarks
            ? await Promise.race([next!, nextTick()])
            : await next!;
          if (abort.signal.aborted) break;
          const now = Date.now();
          if (r === TICK) {
            if (now < checkAt) continue; // events went out since the timer was armed
            checkAt = now + BOOKMARK_IDLE_MS;
            const progress = events.progress();
            const due = now - lastBookmark >= BOOKMARK_MAX_INTERVAL_MS;
            if (progress === undefined || (progress <= sentRevision && !due)) continue;
            controller.enqueue(render(bookmark(registry, progress)));
            sentRevision = progress;
            lastBookmark = now;
            return;
          }
          next = undefined;
          checkAt = now + BOOKMARK_IDLE_MS;
          if (r.done) break;
          const hold = pacer.holdFor(lastWrite, performance.now());
          if (hold > 0) {
            await pacer.wait(hold);
            if (abort.signal.aborted) break;
          }
          // Everything else already waiting goes out in the same write.
          let last = r.value;
          const chunks = [render(last)];
          let size = chunks[0].length;
          for (let more; size < BATCH_BYTES && (more = events.poll());) {
            const bytes = render(more);
            chunks.push(bytes);
            size += bytes.length;
            last = more;
          }
          meter?.sent(chunks.length);
          controller.enqueue(chunks.length === 1 ? chunks[0] : concat(chunks, size));
          lastWrite = performance.now();
          sentRevision = Number(last.object.metadata.resourceVersion);
          return;
        }
      } catch (err) {
        // A watcher that fell too far behind is closed the way kube closes one: the stream
        // just ends, and the client watches again from the last version it saw.
        if (!abort.signal.aborted && !isStoreError(err, "Overflow")) {
          controller.enqueue(render({ type: "ERROR", object: watchError(err, sentRevision) }));
        }
      }
      close(controller);
    },
    async cancel() {
      cleanup();
      await events?.return(undefined);
    },
  });
  // Protobuf watch streams are length-delimited frames, announced as kube does.
  const contentType = protobuf ? `${negotiated.contentType};stream=watch` : negotiated.contentType;
  return new Response(stream, {
    status: 200,
    headers: { "Content-Type": contentType, "Cache-Control": "no-cache, private" },
  });

  function watchError(err: unknown, rv: number): unknown {
    if (isStoreError(err, "Compacted")) {
      const oldest = registry.oldestRevision();
      return expired(`too old resource version: ${rv} (${oldest - 1})`).toStatus();
    }
    if (err instanceof StatusError) return err.toStatus();
    return new StatusError(500, "InternalError", `watch failed: ${(err as Error)?.message ?? err}`)
      .toStatus();
  }
}
