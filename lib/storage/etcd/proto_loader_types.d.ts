// The one function of @grpc/proto-loader the tests use (protos_testdata.ts): etcd's protos read
// by protobuf.js, as the reference of messages.ts and a test server's service (its own typings
// pull in @types/node, whose globals clash with Deno's).

export interface LoaderOptions {
  includeDirs?: string[];
  keepCase?: boolean;
  longs?: unknown;
  enums?: unknown;
  defaults?: boolean;
  oneofs?: boolean;
}

export function loadSync(filename: string, options?: LoaderOptions): unknown;
