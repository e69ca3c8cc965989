/**
 * A worker for `worker_test.ts`: connects a {@link WorkerStoreClient} to the port it is sent
 * and runs the commands the test posts, answering each with its result.
 * @module
 */

/// <reference lib="deno.worker" />

import { WorkerStoreClient } from "./client.ts";

let client: WorkerStoreClient | undefined;
let watchEvents: Promise<number[]> | undefined;

self.onmessage = async (ev: MessageEvent) => {
  const cmd = ev.data;
  try {
    let result: unknown;
    switch (cmd.t) {
      case "connect":
        client = await WorkerStoreClient.connect(cmd.port, { revisionCell: cmd.revisionCell });
        result = client.currentRevision();
        break;
      case "watch": {
        // Collects the revisions of the next `n` events under the prefix.
        const w = client!.watch(cmd.prefix, { afterRevision: cmd.after });
        watchEvents = (async () => {
          const revs: number[] = [];
          for await (const e of w) {
            revs.push(e.revision);
            if (revs.length === cmd.n) break;
          }
          return revs;
        })();
        result = true;
        break;
      }
      case "watched":
        result = await watchEvents;
        break;
      case "create":
        result = await Promise.all(
          (cmd.keys as string[]).map((k) => client!.create(k, cmd.value)),
        );
        break;
      case "get":
        result = await client!.get(cmd.key);
        break;
      case "close":
        await client!.close();
        result = true;
        break;
    }
    self.postMessage({ result });
  } catch (err) {
    self.postMessage({ error: String(err) });
  }
};
