/**
 * What serves the etcd client's messages (`wire.ts`): the gRPC connections
 * (`grpc_connection.ts`) of the clients and their watch streams, answering through `post`. Run on
 * the client's worker thread (`client_worker.ts`), or on the caller's own thread (`client.ts`).
 * @module
 */

import { GrpcConnection, type GrpcStream, wireError } from "./grpc_connection.ts";
import type { FromClientWorker, ToClientWorker, WatchResponse } from "./wire.ts";

/** A handler of the client's messages, answering through `post`. */
export function clientHandler(post: (m: FromClientWorker) => void): (m: ToClientWorker) => void {
  const connections = new Map<number, GrpcConnection>();
  const streams = new Map<number, GrpcStream>();
  return (m: ToClientWorker): void => {
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
  };
}
