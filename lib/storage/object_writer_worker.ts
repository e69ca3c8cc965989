/// <reference lib="deno.worker" />
/**
 * The thread that writes object files for {@link ObjectFileWriter} (object_writer.ts): batches
 * of writes and removes, each done with synchronous calls, so a file costs one thread's system
 * calls and none of the request thread's time. The messages are in object_writer.ts.
 * @module
 */

import type { WriteBatch, WriteResults } from "./object_writer.ts";

/** Directories made (or found) so far, relative to the objects directory. */
const made = new Set<string>();

self.onmessage = (e: MessageEvent<WriteBatch>) => {
  const { dir, ops, fileMode, dirMode } = e.data;
  const results: WriteResults = [];
  for (const op of ops) {
    const full = `${dir}/${op.rel}`;
    try {
      if (op.parent && !made.has(op.parent)) {
        Deno.mkdirSync(`${dir}/${op.parent}`, { recursive: true, mode: dirMode });
        made.add(op.parent);
      }
      if (op.text === undefined) {
        try {
          Deno.removeSync(full);
          results.push("written");
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) throw err;
          results.push("absent");
        }
      } else {
        // A new version replaces the file whole: a reader sees the old or the new one.
        Deno.writeTextFileSync(`${full}.tmp`, op.text, { mode: fileMode });
        Deno.renameSync(`${full}.tmp`, full);
        results.push("written");
      }
    } catch (err) {
      results.push({ error: err instanceof Error ? err.message : String(err) });
    }
  }
  self.postMessage(results);
};
