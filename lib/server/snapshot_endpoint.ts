/**
 * `GET /storage/snapshot`: a consistent snapshot of the store, streamed (the format of
 * lib/storage's `snapshot/format.ts`). Every live key is read at one revision in one step, so
 * writes go on meanwhile and none is half in; values are in their stored form (encrypted at
 * rest stays encrypted). A non-resource URL: allowed to `system:masters`, and to whoever an
 * RBAC rule grants `get` on it. `platform storage snapshot` is its client.
 * @module
 */

import { methodNotAllowed } from "../api/mod.ts";
import { encodeSnapshot, type Store, takeSnapshot, type ValueTransformer } from "../storage/mod.ts";
import type { RequestContext } from "./context.ts";

/** The path of the snapshot endpoint. */
export const SNAPSHOT_PATH = "/storage/snapshot";

/** Content type of a snapshot (JSON lines, version 1 of the format). */
export const SNAPSHOT_CONTENT_TYPE = "application/vnd.platform.snapshot.v1+jsonl";

/** The handler of {@link SNAPSHOT_PATH} for `store`, whose values `transformer` stores. */
export function snapshotHandler(
  store: Store,
  transformer: ValueTransformer | undefined,
): (ctx: RequestContext) => Promise<Response> {
  return async (ctx) => {
    if (ctx.req.method !== "GET") throw methodNotAllowed();
    const content = await takeSnapshot(store, transformer);
    return new Response(encodeSnapshot(content), {
      headers: {
        "Content-Type": SNAPSHOT_CONTENT_TYPE,
        "Cache-Control": "no-store",
        "Platform-Snapshot-Revision": String(content.revision),
      },
    });
  };
}
