/**
 * The etcd client's worker thread: serves the messages of every threaded `EtcdClient` of the
 * process (`client_handler.ts`), so that grpc-js and the HTTP/2 under it run beside the request
 * handlers instead of on their thread. Messages both ways are arrays, sent once per turn of the
 * event loop (see `client.ts`).
 * @module
 */

import { parentPort } from "node:worker_threads";
import { clientHandler } from "./client_handler.ts";
import type { FromClientWorker, ToClientWorker } from "./wire.ts";

const port = parentPort!;

let outbox: FromClientWorker[] = [];
function flush(): void {
  const batch = outbox;
  outbox = [];
  port.postMessage(batch);
}

const handle = clientHandler((m) => {
  if (outbox.length === 0) queueMicrotask(flush);
  outbox.push(m);
});

port.on("message", (batch: ToClientWorker[]) => {
  for (const m of batch) handle(m);
});
