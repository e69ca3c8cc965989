/**
 * Watch: a chunked stream of newline-delimited `{type, object}` events. Without a
 * resourceVersion (or with `0`) the stream starts with synthetic ADDED events for the current
 * state; with one, it starts right after it. A version no longer retained gives an ERROR event
 * carrying a 410 Status. A watcher too slow to keep up is ended without an error.
 */

import { badRequest, gone, StatusError, timeout } from "../../api/errors.ts";
import { negotiateOutput } from "../../codec/negotiate.ts";
import { parseIncludeObject, toTable } from "../../codec/table.ts";
import { parseFilter } from "../../registry/filter.ts";
import type { KubeObject } from "../../registry/definition.ts";
import type { WatchEvent } from "../../registry/generic.ts";
import { isStoreError } from "../../storage/store.ts";
import type { RequestContext } from "../context.ts";
import type { ResourceScope } from "./scope.ts";

/** Default and maximum watch duration when the client names none. */
const DEFAULT_TIMEOUT_S = 30 * 60;
/** How long a watch waits for a resourceVersion the server has not reached yet. */
const FUTURE_WAIT_MS = 3000;

export async function watchHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { allowAs: ["Table"] });
  const q = ctx.url.searchParams;
  const registry = scope.registry;
  const def = registry.def;
  let filter = parseFilter(def, q.get("labelSelector"), q.get("fieldSelector"));
  if (ctx.info.name) {
    // A watch on one object (/watch/…/{name}) is a watch on its name.
    const byName = parseFilter(def, null, `metadata.name=${ctx.info.name}`);
    filter = { ...filter, fields: byName?.fields };
  }
  const timeoutParam = q.get("timeoutSeconds");
  let timeoutS = DEFAULT_TIMEOUT_S;
  if (timeoutParam !== null && timeoutParam !== "") {
    const n = Number(timeoutParam);
    if (!Number.isInteger(n) || n < 0) {
      throw badRequest(`invalid timeoutSeconds: "${timeoutParam}"`);
    }
    if (n > 0) timeoutS = n;
  }
  const rv = q.get("resourceVersion") ?? "";
  let initial: KubeObject[] = [];
  let afterRevision: number;
  if (rv === "" || rv === "0") {
    const list = await registry.list(ctx.info.namespace, { filter });
    initial = list.items;
    afterRevision = Number(list.resourceVersion);
  } else {
    afterRevision = Number(rv);
    if (!Number.isSafeInteger(afterRevision) || afterRevision < 0) {
      throw badRequest(`invalid resource version: "${rv}"`);
    }
    await waitForRevision(registry.currentRevision.bind(registry), afterRevision);
  }

  const include = parseIncludeObject(q.get("includeObject"));
  const asTable = negotiated.as?.kind === "Table";
  const render = (ev: WatchEvent | { type: "ERROR"; object: unknown }): string => {
    let object = ev.object as KubeObject;
    if (asTable && ev.type !== "ERROR") {
      object = toTable(def, [object], {
        apiVersion: `${negotiated.as!.group}/${negotiated.as!.version}`,
        listMeta: { resourceVersion: object.metadata?.resourceVersion },
        include,
      });
    }
    return JSON.stringify({ type: ev.type, object }) + "\n";
  };

  const abort = new AbortController();
  const onAbort = () => abort.abort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => abort.abort(), timeoutS * 1000);
  const encoder = new TextEncoder();
  let events: AsyncGenerator<WatchEvent> | undefined;
  const cleanup = () => {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
    abort.abort();
  };

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const obj of initial) {
        controller.enqueue(encoder.encode(render({ type: "ADDED", object: obj })));
      }
      try {
        events = registry.watch(ctx.info.namespace, {
          afterRevision,
          filter,
          signal: abort.signal,
        });
      } catch (err) {
        controller.enqueue(
          encoder.encode(render({ type: "ERROR", object: watchError(err, afterRevision) })),
        );
        cleanup();
        controller.close();
      }
    },
    async pull(controller) {
      if (!events) return;
      try {
        const next = await events.next();
        if (next.done) {
          cleanup();
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(render(next.value)));
      } catch (err) {
        // A watcher that fell too far behind is closed the way kube closes one: the stream
        // just ends, and the client watches again from the last version it saw.
        if (!abort.signal.aborted && !isStoreError(err, "Overflow")) {
          controller.enqueue(
            encoder.encode(render({ type: "ERROR", object: watchError(err, afterRevision) })),
          );
        }
        cleanup();
        controller.close();
      }
    },
    async cancel() {
      cleanup();
      await events?.return(undefined);
    },
  });
  return new Response(stream, {
    status: 200,
    headers: { "Content-Type": negotiated.contentType, "Cache-Control": "no-cache, private" },
  });
}

function watchError(err: unknown, rv: number): unknown {
  if (isStoreError(err, "Compacted")) {
    return gone(`too old resource version: ${rv}`).toStatus();
  }
  if (err instanceof StatusError) return err.toStatus();
  return new StatusError(500, "InternalError", `watch failed: ${(err as Error)?.message ?? err}`)
    .toStatus();
}

/** Waits briefly for a revision the store has not reached; 504 with Retry-After after that. */
async function waitForRevision(current: () => number, rv: number): Promise<void> {
  const deadline = Date.now() + FUTURE_WAIT_MS;
  while (current() < rv) {
    if (Date.now() > deadline) {
      throw timeout(`Too large resource version: ${rv}, current: ${current()}`, 1);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
