// The one function of @grpc/proto-loader the etcd client uses (see grpc_types.d.ts for why).

export interface LoaderOptions {
  includeDirs?: string[];
  keepCase?: boolean;
  longs?: unknown;
  enums?: unknown;
  defaults?: boolean;
  oneofs?: boolean;
}

export function loadSync(filename: string, options?: LoaderOptions): unknown;
