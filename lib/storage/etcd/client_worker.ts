/**
 * The etcd client's worker thread: runs the gRPC connections (`grpc_connection.ts`) of every
 * `EtcdClient` of the process, so that grpc-js and the HTTP/2 under it (about a third of the
 * main thread's time per create on etcd) run beside the request handlers instead of on their
 * thread. Messages both ways are arrays, sent once per turn of the event loop (see
 * `client.ts`).
 * @module
 */

import { GrpcConnection, type GrpcStream, wireError } from "./grpc_connection.ts";
import type { FromClientWorker, ToClientWorker, WatchResponse } from "./wire.ts";

/** The worker's global scope, as far as this module uses it. */
const scope = globalThis as unknown as {
  postMessage(message: FromClientWorker[]): void;
  onmessage: ((e: MessageEvent<ToClientWorker[]>) => void) | null;
};

const connections = new Map<number, GrpcConnection>();
const streams = new Map<number, GrpcStream>();

let outbox: FromClientWorker[] = [];
function post(m: FromClientWorker): void {
  if (outbox.length === 0) queueMicrotask(flush);
  outbox.push(m);
}
function flush(): void {
  const batch = outbox;
  outbox = [];
  scope.postMessage(batch);
}

function handle(m: ToClientWorker): void {
  switch (m.op) {
    case "open": {
      const conn = m.conn;
      connections.set(
        conn,
        new GrpcConnection({
          endpoints: m.endpoints,
          routes: m.routes,
          first: m.first,
          tls: m.tls,
          onFailover: (current) => post({ op: "endpoint", conn, current }),
        }),
      );
      return;
    }
    case "call": {
      const c = connections.get(m.conn);
      if (!c) {
        post({ op: "error", id: m.id, err: { code: 1, details: "", message: "client closed" } });
        return;
      }
      c.unary(m.method, m.req, m, (err, res) => {
        post(err ? { op: "error", id: m.id, err } : { op: "result", id: m.id, res });
      });
      return;
    }
    case "watch": {
      const c = connections.get(m.conn);
      if (!c) {
        post({ op: "watchError", sid: m.sid, err: { code: 1, details: "", message: "closed" } });
        return;
      }
      const sid = m.sid;
      const stream = c.watchStream();
      streams.set(sid, stream);
      stream.on("data", (res: WatchResponse) => post({ op: "watchData", sid, res }));
      stream.on("error", (err: Error) => {
        streams.delete(sid);
        post({ op: "watchError", sid, err: wireError(err) });
      });
      stream.on("end", () => {
        streams.delete(sid);
        post({ op: "watchEnd", sid });
      });
      return;
    }
    case "watchWrite":
      streams.get(m.sid)?.write(m.req);
      return;
    case "watchCancel": {
      const stream = streams.get(m.sid);
      streams.delete(m.sid);
      stream?.cancel();
      return;
    }
    case "close":
      connections.get(m.conn)?.close();
      connections.delete(m.conn);
      return;
  }
}

scope.onmessage = (e: MessageEvent<ToClientWorker[]>) => {
  for (const m of e.data) handle(m);
};
