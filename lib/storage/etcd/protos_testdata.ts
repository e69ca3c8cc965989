/**
 * etcd's protos as protobuf.js reads them, with the options the client once used with it
 * (`keepCase`, int64 as numbers, enums as names, defaults filled in): the reference of
 * `messages_test.ts` and the service of test gRPC servers.
 */

// @ts-types="./proto_loader_types.d.ts"
import * as protoLoader from "@grpc/proto-loader";

export function loadEtcdProtos(): unknown {
  return protoLoader.loadSync("rpc.proto", {
    includeDirs: [decodeURIComponent(new URL("./protos/", import.meta.url).pathname)],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: false,
  });
}
