// The one function of @grpc/proto-loader the tests use: etcd's protos read by protobuf.js, as the
// reference for messages.ts and as a test server's service (its own typings pull in @types/node).

export interface LoaderOptions {
  includeDirs?: string[];
  keepCase?: boolean;
  longs?: unknown;
  enums?: unknown;
  defaults?: boolean;
  oneofs?: boolean;
}

export function loadSync(filename: string, options?: LoaderOptions): unknown;
